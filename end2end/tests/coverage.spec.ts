// Ajustes › «Cobertura de datos» (issue 24): an admin sees the market data's coverage —
// per kind, per year, the 32 states (those without data named) and the sources with
// how long ago they were imported — the same figures `market_capabilities` gives Luna.
import { expect, test } from '@playwright/test';
import { ADMIN, hydrated, login } from './helpers';

test('an admin sees the demo market coverage in Ajustes', async ({ page }) => {
  await login(page, ADMIN);
  await expect(page).toHaveURL(/\/$/);
  await page.goto('/ajustes');
  await hydrated(page);
  const section = page.getByTestId('coverage');
  await expect(section.getByRole('heading', { name: 'Cobertura de datos' })).toBeVisible();
  await expect(section.getByTestId('coverage-summary')).toContainText('Proveedores');
  const kinds = section.getByTestId('coverage-kinds');
  for (const label of ['Proveedores', 'Licitaciones', 'Adjudicaciones', 'Registros']) {
    await expect(kinds.locator('tbody tr').filter({ hasText: label })).toHaveCount(1);
  }
  // Every one of the 32 states has a row, with data or «Sin datos».
  await expect(section.getByTestId('coverage-states').locator('tbody tr')).toHaveCount(32);
  await expect(section.getByTestId('coverage-years').locator('tbody tr').first()).toContainText(/20\d\d/);
  await expect(section.getByTestId('coverage-sources')).toContainText('hace ');
});

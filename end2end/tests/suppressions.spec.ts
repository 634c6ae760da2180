// Ajustes › «Correos excluidos» (issue 23): an admin excludes an address by hand,
// imports a CSV with one bad row, and takes an address off the list again; an
// unsubscribe offers no «Quitar».
import { expect, test } from '@playwright/test';
import { ADMIN, hydrated, login } from './helpers';

test('an admin excludes, imports and removes addresses in Ajustes', async ({ page }) => {
  await login(page, ADMIN);
  await expect(page).toHaveURL(/\/$/);
  await page.goto('/ajustes');
  await hydrated(page);
  const section = page.getByTestId('suppressions');
  await expect(section).toBeVisible();
  const stamp = Date.now();
  const manual = `excluido-${stamp}@ejemplo.mx`;

  await section.getByTestId('suppression-email').fill(manual);
  await section.getByTestId('suppression-note').fill('pidió no recibir correos por teléfono');
  await section.getByTestId('suppression-add').click();
  await expect(section.getByRole('status')).toContainText('Correo excluido');
  const row = section.getByTestId('suppression-row').filter({ hasText: manual });
  await expect(row).toContainText('un administrador lo excluyó');

  await section
    .getByTestId('suppression-csv')
    .fill(`correo,motivo\nbaja-${stamp}@ejemplo.mx,baja\nesto-no-es-un-correo,manual\n`);
  await section.getByTestId('suppression-import').click();
  await expect(section.getByRole('status')).toContainText('Importados: 1');
  await expect(section.getByRole('status')).toContainText('Línea 3: no es un correo válido');
  const unsubscribed = section.getByTestId('suppression-row').filter({ hasText: `baja-${stamp}@ejemplo.mx` });
  await expect(unsubscribed).toContainText('se dio de baja');
  // An unsubscribe is the recipient's (issue 43): no one on the team can take it off.
  await expect(unsubscribed.getByTestId('suppression-by-recipient')).toHaveText('Del destinatario');
  await expect(unsubscribed.getByTestId('suppression-remove')).toHaveCount(0);

  await row.getByTestId('suppression-remove').click();
  await expect(section.getByRole('status')).toContainText('puede volver a recibir correos');
  await expect(section.getByTestId('suppression-row').filter({ hasText: manual })).toHaveCount(0);
  // The list is the server's: a reload shows the same.
  await page.reload();
  await hydrated(page);
  await expect(page.getByTestId('suppression-row').filter({ hasText: `baja-${stamp}@ejemplo.mx` })).toHaveCount(1);
  await expect(page.getByTestId('suppression-row').filter({ hasText: manual })).toHaveCount(0);
});

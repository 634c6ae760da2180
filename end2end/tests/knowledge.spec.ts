// The owner's knowledge review page (/conocimiento, issue 7): the demo seeds one note
// en revisión and one suggested edit; the owner merges the note without a page
// reload and it becomes Knowledge. Members get 403. Like the rest of the suite it
// expects the fresh database `.ci/e2e` starts (the merge is not undone afterwards).
import { expect, test } from '@playwright/test';
import { hydrated, login, MEMBER, OWNER, shot } from './helpers';

const NOTE = 'El IMSS pide carta de distribuidor';
const EDIT_TOPIC = 'Precios de referencia 2025';

test('a member cannot open the knowledge review page', async ({ page }) => {
  await login(page, MEMBER);
  await expect(page).toHaveURL(/\/$/);
  const res = await page.goto('/conocimiento');
  expect(res!.status()).toBe(403);
  await expect(page.getByText('No tienes permiso para ver esta página.')).toBeVisible();
  await expect(page.getByRole('button', { name: /^Fusionar/ })).toHaveCount(0);
});

test('the owner merges a seeded note and it leaves the queue for Knowledge', async ({ page }) => {
  await login(page, OWNER);
  await expect(page).toHaveURL(/\/$/);
  const res = await page.goto('/conocimiento');
  expect(res!.status()).toBe(200);
  await hydrated(page);

  const pending = page.getByRole('region', { name: 'Pendientes de revisión' });
  const note = pending.getByRole('listitem', { name: NOTE });
  const edit = pending.getByRole('listitem', { name: EDIT_TOPIC });
  await expect(note).toBeVisible();
  await expect(note).toContainText('Nota nueva');
  await expect(note.getByLabel('Contenido de la nota')).toContainText('carta de distribuidor autorizado');
  // The suggested edit shows its diff: the old line removed, the new one added.
  await expect(edit).toContainText('Edición sugerida');
  const diff = edit.getByLabel('Diferencia propuesta');
  await expect(diff).toContainText('-Tabla de precios de referencia usada en 2025');
  await expect(diff).toContainText('+Tabla de precios de referencia 2026');
  const recent = page.getByRole('list', { name: 'Temas de Knowledge' });
  await expect(recent).not.toContainText(NOTE);
  await shot(page, 'knowledge-review');

  // Merge without a full reload: a marker on window survives only if the page stays.
  await page.evaluate(() => ((window as unknown as { __noReload: boolean }).__noReload = true));
  await page.getByRole('button', { name: `Fusionar «${NOTE}»` }).click();
  await expect(page.getByRole('status')).toHaveText(`«${NOTE}» ya es parte de Knowledge.`);
  await expect(pending.getByRole('listitem', { name: NOTE })).toHaveCount(0);
  await expect(edit).toBeVisible();
  await expect(recent.getByRole('listitem').first()).toContainText(NOTE);
  expect(await page.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload)).toBe(true);

  // Still merged after a reload (and not pending again).
  await page.reload();
  await hydrated(page);
  await expect(page.getByRole('region', { name: 'Pendientes de revisión' }).getByRole('listitem', { name: NOTE })).toHaveCount(0);
  await expect(page.getByRole('list', { name: 'Temas de Knowledge' })).toContainText(NOTE);
  await shot(page, 'knowledge-merged');
});

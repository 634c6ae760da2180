// The chat on the local director: messages go out, Luna's anchored answer streams back
// over the websocket, and the conversation survives a reload (issue 6).
import { expect, test } from '@playwright/test';
import { hydrated, login } from './helpers';

test('a member asks for credits and gets an anchored answer that survives a reload', async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await login(page, 'duena@demo.luna.mx');
  await expect(page).toHaveURL(/\/$/);
  await hydrated(page);
  const composer = page.getByLabel('Mensaje para Luna');
  await expect(page.getByRole('button', { name: 'Enviar' })).toBeEnabled();
  await composer.fill('¿Cuántos créditos me quedan?');
  await page.getByRole('button', { name: 'Enviar' }).click();

  await expect(page.getByTestId('person-message').last()).toHaveText('¿Cuántos créditos me quedan?');
  await expect(page.getByTestId('tool-line').last()).toContainText('Consultando tus créditos');
  const answer = page.getByTestId('luna-message').last();
  await expect(answer).toContainText('créditos de contacto');
  await expect(answer).not.toContainText('[[');
  // The figures are anchors, not free text.
  await expect(answer.locator('[data-ref]')).toHaveCount(2);
  await expect(composer).toHaveValue('');

  const before = await page.getByTestId('chat-log').innerText();
  await page.reload();
  await hydrated(page);
  await expect(page.getByTestId('luna-message').last()).toContainText('créditos de contacto');
  // Polled: lazily loaded parts of the chat render a moment after the rest.
  await expect.poll(() => page.getByTestId('chat-log').innerText()).toBe(before);
});

test('without a criterion Luna asks what to look for instead of inventing it', async ({ page }) => {
  await login(page, 'admin@demo.luna.mx');
  await hydrated(page);
  // Enter before the session is open sends nothing (the button is disabled until then).
  await expect(page.getByRole('button', { name: 'Enviar' })).toBeEnabled();
  await page.getByLabel('Mensaje para Luna').fill('hola');
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('luna-message').last()).toContainText('Cuéntame qué empresas buscas');
});

test('the seed scene: Luna counts, searches and builds an argued selection of forty on the board', async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 900 });
  await login(page, 'ventas@demo.luna.mx');
  await hydrated(page);
  await page
    .getByLabel('Mensaje para Luna')
    .fill('Quiero 40 fabricantes de empaque en Jalisco que ya le hayan vendido a gobierno. Guárdamelos, consígueme el correo de los 10 mejores y ármame una secuencia de tres correos.');
  await page.getByRole('button', { name: 'Enviar' }).click();
  const answer = page.getByTestId('luna-message').last();
  await expect(answer).toContainText('Armé una selección de 40', { timeout: 30_000 });
  await expect(page.getByTestId('selection-card')).toHaveCount(40);
  await expect(page.getByTestId('selection-card').first()).toContainText('Le ha vendido a gobierno');
  await expect(page.getByTestId('selection-card').filter({ hasText: 'Prioridad' })).toHaveCount(10);
  // Each step shows up as a tool line in product language.
  await expect(page.getByTestId('tool-line').filter({ hasText: 'proveedores' }).first()).toBeVisible();
  await page.screenshot({ path: 'artifacts/scene-selection.png', fullPage: false });
});

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
  // The README's screenshots (commit them when they change): the split view mid-scene,
  // with the save card waiting, and the same scene on a phone's tabs.
  await page.setViewportSize({ width: 1280, height: 800 });
  await expect(answer).toBeInViewport();
  await page.screenshot({ path: '../docs/screenshot.png' });
  await page.setViewportSize({ width: 390, height: 844 });
  await expect(page.getByRole('tablist', { name: 'Secciones' })).toBeVisible();
  await expect(answer).toBeInViewport();
  await page.screenshot({ path: '../docs/screenshot-phone.png' });
});

test('a reopened conversation on a phone shows its newest message and follows new ones unless scrolled up', async ({ page, context }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await login(page, 'explorer@demo.luna.mx');
  await expect(page).toHaveURL(/\/$/);
  await hydrated(page);
  const log = page.getByTestId('chat-log');
  const composer = page.getByLabel('Mensaje para Luna');
  const answers = page.getByTestId('luna-message');
  const ask = async (p: typeof page, text: string) => {
    // The composer opens once the conversation so far is on screen: count after that,
    // or a tab opened a moment ago counts no answers yet.
    await expect(p.getByRole('button', { name: 'Enviar' })).toBeEnabled();
    const before = await p.getByTestId('luna-message').count();
    await p.getByLabel('Mensaje para Luna').fill(text);
    await p.getByRole('button', { name: 'Enviar' }).click();
    await expect(p.getByTestId('luna-message')).toHaveCount(before + 1, { timeout: 30_000 });
    await expect(p.getByText('Luna está trabajando…')).toHaveCount(0);
  };
  // A conversation taller than two phone screens.
  for (let i = 1; i <= 12; i++) {
    await ask(page, `¿Cuántos créditos me quedan? (${i})`);
    if (await log.evaluate((el) => el.scrollHeight > 2 * el.clientHeight)) break;
  }
  expect(await log.evaluate((el) => el.scrollHeight > 2 * el.clientHeight)).toBe(true);

  // Reopened, it shows the newest answer, not the first question.
  await page.reload();
  await hydrated(page);
  await expect(answers.last()).toBeInViewport();
  await expect(page.getByTestId('person-message').first()).not.toBeInViewport();
  await expect(composer).toBeInViewport();

  // It follows a new message.
  await ask(page, '¿Cuántos créditos me quedan? (siguiente)');
  await expect(answers.last()).toBeInViewport();

  // Scrolled up to read, it stays put while a message arrives from another tab.
  await log.evaluate((el) => el.scrollTo({ top: 0 }));
  await expect(page.getByTestId('person-message').first()).toBeInViewport();
  const other = await context.newPage();
  await other.goto('/');
  await hydrated(other);
  const count = await answers.count();
  await ask(other, '¿Cuántos créditos me quedan? (otra pestaña)');
  await expect(answers).toHaveCount(count + 1);
  await expect(page.getByTestId('person-message').first()).toBeInViewport();
  await expect(answers.last()).not.toBeInViewport();

  // Back at the bottom, it follows again.
  await log.evaluate((el) => el.scrollTo({ top: el.scrollHeight }));
  await ask(other, '¿Cuántos créditos me quedan? (de nuevo)');
  await expect(answers).toHaveCount(count + 2);
  await expect(answers.last()).toBeInViewport();
  await other.close();
});

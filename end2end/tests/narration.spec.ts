// Live narration (issue 21): with a model that streams (a slow local stub, see
// model-stub/server.mjs; .ci/e2e starts a second Luna configured with it), the chat
// shows Luna's answer growing sentence by sentence while the turn still runs, then the
// judged answer replaces it.
import { expect, test } from '@playwright/test';
import { hydrated, login, OWNER } from './helpers';

const MODEL_URL = process.env.LUNA_E2E_MODEL_URL;

test.skip(!MODEL_URL, 'needs the streaming model server that .ci/e2e starts');
test.use({ baseURL: MODEL_URL });

test('the answer grows in the chat while the model writes it', async ({ page }) => {
  await login(page, OWNER);
  await hydrated(page);
  await expect(page.getByRole('button', { name: 'Enviar' })).toBeEnabled();
  await page.getByLabel('Mensaje para Luna').fill('¿Cómo trabajas?');
  await page.getByRole('button', { name: 'Enviar' }).click();

  const live = page.getByTestId('narration-live');
  const working = page.getByText('Luna está trabajando…');
  // The first sentence shows while the rest is still being written…
  await expect(live).toContainText('te cuento cómo trabajo contigo.');
  await expect(live).not.toContainText('Tú decides');
  await expect(working).toBeVisible();
  const first = await live.innerText();
  // …then it grows, still before the turn ends…
  await expect(live).toContainText('Primero busco proveedores');
  await expect(working).toBeVisible();
  const later = await live.innerText();
  expect(later.length).toBeGreaterThan(first.length);
  expect(later.startsWith(first.trim())).toBeTruthy();
  // …and the judged answer takes its place once the turn finishes.
  const answer = page.getByTestId('luna-message').last();
  await expect(answer).toContainText('Tú decides cada paso antes de que pase.');
  await expect(live).toHaveCount(0);
  await expect(working).toHaveCount(0);
  await expect(answer).not.toContainText('[[');
});

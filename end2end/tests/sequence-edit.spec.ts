// Issue 23 in the browser: the person edits a draft step on the board, the review card
// follows the new version, pages to the third recipient's email as the server renders
// it, authorizes; then a recipient unsubscribes from the link in a message of the
// local outbox, in Chromium, without logging in.
import { expect, Page, test } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';
import { MEMBER, hydrated, login, newConversation, shot } from './helpers';

const SCENE =
  'Quiero 40 fabricantes de empaque en Jalisco que ya le hayan vendido a gobierno. Guárdamelos, consígueme el correo de los 10 mejores y ármame una secuencia de tres correos.';

async function answered(page: Page, n: number) {
  await expect(page.getByTestId('luna-message')).toHaveCount(n, { timeout: 45_000 });
  await expect(page.getByText('Luna está trabajando…')).toHaveCount(0, { timeout: 30_000 });
}

function outbox(): string[] {
  const dir = path.join(process.env.LUNA_E2E_DATA_DIR ?? '', 'outbox');
  if (!process.env.LUNA_E2E_DATA_DIR || !fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).filter((f) => f.endsWith('.eml')).map((f) => path.join(dir, f));
}

test('edit a draft step on the board, page to the third recipient, authorize; unsubscribe in Chromium', async ({ page, browser }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await login(page, MEMBER);
  await expect(page).toHaveURL(/\/$/);
  await hydrated(page);
  await newConversation(page);

  await page.getByLabel('Mensaje para Luna').fill(SCENE);
  await page.getByRole('button', { name: 'Enviar' }).click();
  await answered(page, 1);
  const cards = page.getByTestId('decision-card');
  await cards.first().getByRole('button', { name: 'Guardar' }).click();
  // The scene (scene.spec) revealed these contacts already: Luna goes on to the sequence.
  await answered(page, 2);
  const review = cards.first();
  await expect(review).toHaveAttribute('data-kind', 'revisar_secuencia');

  // The board: edit the second step (subject, body, days).
  const sequence = page.getByTestId('sequence-card');
  await expect(sequence).toHaveCount(1);
  const step = sequence.getByTestId('sequence-step').nth(1);
  await step.getByRole('button', { name: 'Editar paso 2' }).click();
  // A negative delay is refused in Spanish and nothing changes.
  await step.getByLabel('Días después de autorizar').fill('-1');
  await step.getByRole('button', { name: 'Guardar paso' }).click();
  await expect(step.getByRole('alert')).toContainText('no pueden ser negativos');
  await step.getByLabel('Días después de autorizar').fill('4');
  await step.getByLabel('Asunto').fill('Editado en el tablero para {{empresa}}');
  await step.getByLabel('Cuerpo').fill('Hola {{nombre}}, lo escribí yo en el tablero.');
  await step.getByRole('button', { name: 'Guardar paso' }).click();
  await expect(sequence.getByTestId('sequence-step').nth(1)).toContainText('Paso 2 · día 4 · Editado en el tablero');

  // The waiting review card now shows the edited step.
  await expect(review.getByTestId('sequence-steps')).toContainText('Editado en el tablero para');
  // Page to the third recipient: their own email, rendered by the server.
  const pager = review.getByTestId('recipient-pager');
  await expect(pager.getByTestId('recipient-position')).toHaveText('Destinatario 1 de 10');
  const first = await pager.getByTestId('recipient-address').innerText();
  await pager.getByRole('button', { name: 'Siguiente' }).click();
  await pager.getByRole('button', { name: 'Siguiente' }).click();
  await expect(pager.getByTestId('recipient-position')).toHaveText('Destinatario 3 de 10');
  const third = pager.getByTestId('recipient-email');
  await expect(third).toHaveAttribute('data-position', '3');
  await expect(third).toContainText('lo escribí yo en el tablero');
  await expect(third).not.toContainText('{{');
  expect(await pager.getByTestId('recipient-address').innerText()).not.toBe(first);
  await shot(page, 'sequence-edit-third-recipient');
  await pager.getByRole('button', { name: 'Anterior' }).click();
  await expect(pager.getByTestId('recipient-position')).toHaveText('Destinatario 2 de 10');

  const before = outbox();
  await review.getByRole('button', { name: 'Autorizar' }).click();
  await expect(page.getByTestId('decision-result').last()).toContainText('Autoricé 3 pasos');
  await expect(page.getByTestId('sequence-status')).not.toHaveText('Borrador · nada se envía');

  // Unsubscribe from a sent message's link, in a fresh context with no session.
  if (!process.env.LUNA_E2E_DATA_DIR) return;
  const fresh = () => outbox().filter((f) => !before.includes(f));
  await expect.poll(() => fresh().length, { timeout: 45_000 }).toBeGreaterThan(0);
  const eml = fs.readFileSync(fresh()[0], 'utf8').replace(/\r?\n[ \t]+/g, '');
  const token = /^List-Unsubscribe:.*\/baja\/([A-Za-z0-9_.~-]+)>/m.exec(eml)?.[1];
  expect(token, 'the message carries the List-Unsubscribe header').toBeTruthy();
  const stranger = await browser.newContext();
  const inbox = await stranger.newPage();
  await inbox.goto(`/baja/${token}`);
  await expect(inbox.getByRole('heading', { name: '¿Darte de baja?' })).toBeVisible();
  await inbox.getByRole('button', { name: 'Confirmar la baja' }).click();
  await expect(inbox.getByRole('heading', { name: 'Listo, te diste de baja' })).toBeVisible();
  // Idempotent: the link again says the same, not an error.
  await inbox.goto(`/baja/${token}`);
  await expect(inbox.getByRole('heading')).not.toContainText('No pudimos');
  await stranger.close();
  // The board says why that recipient's remaining steps stopped.
  await expect(page.getByTestId('sequence-progress').filter({ hasText: 'se dio de baja' })).toHaveCount(1, {
    timeout: 15_000,
  });
});

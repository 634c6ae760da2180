// A long research run from the chat (issue 9): a person asks in Spanish for an
// investigation, accepts the investigar card, and follows the run — its searches as
// tool lines in the chat, its real phases on the board and the result, every figure
// an anchor. The local director plays the model (framing and write-up).
import { expect, test } from '@playwright/test';
import { MEMBER, hydrated, login, newConversation, shot } from './helpers';

const ASK = 'Investiga a los fabricantes de empaque en Jalisco que le venden a gobierno';

test('a person asks for an investigation, accepts the card and reads the anchored result', async ({ page }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await login(page, MEMBER);
  await expect(page).toHaveURL(/\/$/);
  await hydrated(page);
  await newConversation(page);

  await page.getByLabel('Mensaje para Luna').fill(ASK);
  await page.getByRole('button', { name: 'Enviar' }).click();
  await expect(page.getByTestId('luna-message')).toHaveCount(1, { timeout: 45_000 });
  await expect(page.getByText('Luna está trabajando…')).toHaveCount(0, { timeout: 30_000 });

  // The investigar card: the criterion, the phases it will run, its expiry.
  const card = page.locator('[data-testid="decision-card"][data-kind="investigar"]');
  await expect(card).toHaveCount(1);
  await expect(card).toContainText('empaque y envases en Jalisco');
  await expect(card).toContainText('Buscando Proveedores');
  await expect(card).toContainText('Escribiendo el resultado');
  await expect(card.getByTestId('decision-expiry')).toContainText('Vence en');
  // Nothing runs before the tap.
  await expect(page.getByTestId('run-card')).toHaveCount(0);
  await shot(page, 'research-1-card');
  await card.getByRole('button', { name: 'Aceptar' }).click();
  await expect(card).toHaveCount(0);

  // The run on the board: six real phases, each done with what it found.
  const run = page.getByTestId('run-card');
  await expect(run).toHaveCount(1);
  await expect(run.getByTestId('run-status')).toHaveText('Terminada', { timeout: 60_000 });
  const phases = run.getByTestId('run-phase');
  await expect(phases).toHaveCount(6);
  for (let i = 0; i < 6; i++) await expect(phases.nth(i)).toHaveAttribute('data-status', 'lista');
  await expect(run.locator('[data-phase="encuadre"]')).toContainText('empaque y envases en Jalisco');

  // The result: prose whose names and figures are anchors, never raw markers.
  const result = run.getByTestId('run-result');
  await expect(result).toContainText('Por monto, domina');
  await expect(result).not.toContainText('[[');
  await expect(result.locator('[data-ref^="company:"]').first()).toBeVisible();
  await expect(result.locator('[data-ref^="evidence:"]').first()).toBeVisible();
  const bare = await result.evaluate((el) => {
    // Every digit of the result sits inside an anchor.
    const clone = el.cloneNode(true) as HTMLElement;
    clone.querySelectorAll('[data-ref]').forEach((a) => a.remove());
    return /\d/.test(clone.textContent ?? '');
  });
  expect(bare).toBe(false);

  // The chat shows what the run did, as tool lines, and links to the run.
  const lines = page.getByTestId('tool-line');
  await expect(lines.filter({ hasText: 'Contando proveedores en Jalisco' })).toHaveCount(1);
  await expect(lines.filter({ hasText: 'Buscando proveedores en Jalisco' })).toHaveCount(1);
  await expect(lines.filter({ hasText: 'Sumando Adjudicaciones' })).toHaveCount(1);
  await expect(lines.filter({ hasText: 'Revisando marcas de riesgo' })).toHaveCount(1);
  await expect(lines.filter({ hasText: 'Comparando segmentos' })).toHaveCount(1);
  await expect(page.getByTestId('run-link')).toContainText('Terminada');
  await shot(page, 'research-2-result');

  // The leading company opens its evidence, without leaving the page.
  await result.locator('[data-ref^="company:"]').first().click();
  await expect(page.getByRole('dialog')).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(page.getByRole('dialog')).toHaveCount(0);

  // After a reload the board and the chat fold the same log.
  await page.reload();
  await hydrated(page);
  await expect(page.getByTestId('run-card').getByTestId('run-status')).toHaveText('Terminada');
  await expect(page.getByTestId('run-card').getByTestId('run-result')).toContainText('Por monto, domina');
  await expect(page.getByTestId('tool-line').filter({ hasText: 'Sumando Adjudicaciones' })).toHaveCount(1);
});

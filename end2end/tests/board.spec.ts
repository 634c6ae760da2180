// The board and the evidence drawer (issue 10): argued cards open the company's file
// and can be removed, the saved list is a kanban whose moves persist, the mobile tabs
// carry badges, and a dropped websocket comes back without losing or doubling messages.
import { expect, Page, test } from '@playwright/test';
import { OWNER, clearPending, hydrated, login, shot } from './helpers';

const SCENE = 'Quiero 40 fabricantes de empaque en Jalisco que ya le hayan vendido a gobierno.';
const SAVE = `${SCENE} Guárdamelos.`;

/** Luna's answers shown before the last message was sent. */
let answersBefore = 0;

async function send(page: Page, text: string) {
  await expect(page.getByRole('button', { name: 'Enviar' })).toBeEnabled();
  answersBefore = await page.getByTestId('luna-message').count();
  await page.getByLabel('Mensaje para Luna').fill(text);
  await page.getByRole('button', { name: 'Enviar' }).click();
}

/** Waits until the turn that was just sent has finished: a new answer, not the last
 *  turn's (which already says the same), and nothing running. */
async function turnDone(page: Page) {
  const answers = page.getByTestId('luna-message');
  await expect(answers).toHaveCount(answersBefore + 1, { timeout: 30_000 });
  await expect(answers.last()).toContainText('Armé una selección de 40');
  await expect(page.getByText('Luna está trabajando…')).toHaveCount(0, { timeout: 30_000 });
}

test('a selection card opens the evidence drawer, Escape closes it and focus comes back', async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 900 });
  await login(page, OWNER);
  await hydrated(page);
  await send(page, SCENE);
  await turnDone(page);
  await expect(page.getByTestId('selection-card')).toHaveCount(40);

  const opener = page.getByTestId('selection-open').first();
  const name = (await opener.innerText()).trim();
  await opener.click();
  const drawer = page.getByRole('dialog');
  await expect(drawer).toBeVisible();
  await expect(drawer).toHaveAttribute('aria-modal', 'true');
  await expect(drawer.getByRole('heading', { level: 2 })).toContainText(name.split(' (')[0]);
  // The company sold to government: its awards come with the two charts.
  await expect(drawer.getByTestId('drawer-awards')).toContainText('Adjudicaciones ·');
  await expect(drawer.getByTestId('bar-chart')).toHaveCount(2);
  await expect(drawer.getByTestId('drawer-marks')).toBeVisible();
  await expect(page.getByTestId('drawer-close')).toBeFocused();
  await shot(page, 'evidence-drawer');

  await page.keyboard.press('Escape');
  await expect(drawer).toHaveCount(0);
  await expect(opener).toBeFocused();

  // The close button works too, and tapping the card body opens it as well.
  await page.getByTestId('selection-card').nth(1).locator('p').first().click();
  await expect(drawer).toBeVisible();
  await page.getByTestId('drawer-close').click();
  await expect(drawer).toHaveCount(0);
});

test('quitar removes a card from the selection, and the board keeps it removed after a reload', async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 900 });
  await login(page, OWNER);
  await hydrated(page);
  await send(page, SCENE);
  await turnDone(page);
  const cards = page.getByTestId('selection-card');
  await expect(cards).toHaveCount(40);
  const ref = await cards.first().getAttribute('data-ref');
  await cards.first().getByTestId('selection-remove').click();
  await expect(cards).toHaveCount(39);
  await expect(page.locator(`[data-testid="selection-card"][data-ref="${ref}"]`)).toHaveCount(0);
  await expect(page.getByRole('region', { name: 'Selección' }).getByRole('heading')).toContainText('39');

  await page.reload();
  await hydrated(page);
  await expect(cards).toHaveCount(39);
});

test('on a phone the Tablero and Decisiones tabs carry badges with their counts', async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await login(page, OWNER);
  await hydrated(page);
  await page.getByRole('tab', { name: 'Decisiones' }).click();
  await clearPending(page);
  await expect(page.getByTestId('tab-badge-decisions-pane')).toHaveCount(0);
  await page.getByRole('tab', { name: 'Chat' }).click();
  await send(page, SAVE);
  await expect(page.getByTestId('tab-badge-decisions-pane')).toHaveText('1', { timeout: 30_000 });
  await expect(page.getByTestId('tab-badge-board-pane')).toHaveText('40');
  await expect(page.getByRole('tab', { name: /Decisiones/ })).toHaveAccessibleName(/1 decisiones pendientes/);
  await shot(page, 'mobile-badges');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow).toBeLessThanOrEqual(0);
});

test('the saved list is a kanban: a card moved with the keyboard stays moved after a reload', async ({ page }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await login(page, OWNER);
  await hydrated(page);
  // The save card left by the mobile test (or a new one).
  const card = page.getByTestId('decision-card');
  if ((await card.count()) === 0) {
    await send(page, SAVE);
    await expect(card).toHaveCount(1, { timeout: 30_000 });
  }
  await expect(card.first()).toHaveAttribute('data-kind', 'guardar_en_crm');
  await card.first().getByRole('button', { name: 'Guardar' }).click();
  await expect(page.getByTestId('saved-summary')).toContainText('empresas');

  const kanban = page.getByTestId('kanban');
  await expect(kanban).toBeVisible();
  const nuevo = kanban.locator('[data-testid="kanban-column"][data-stage="Nuevo"]');
  const contactado = kanban.locator('[data-testid="kanban-column"][data-stage="Contactado"]');
  const first = nuevo.getByTestId('kanban-card').first();
  const record = await first.getAttribute('data-record');
  const before = Number(await contactado.getByTestId('kanban-count').innerText());

  // A second tab on the same conversation follows the move without a reload.
  const other = await page.context().newPage();
  await other.setViewportSize({ width: 1440, height: 900 });
  await other.goto('/');
  await hydrated(other);
  await expect(other.getByTestId('kanban')).toBeVisible();

  // The keyboard alternative to dragging: focus the card's select and pick a stage.
  const select = first.getByTestId('kanban-move');
  await select.focus();
  await select.selectOption('Contactado');
  const moved = contactado.locator(`[data-record="${record}"]`);
  await expect(moved).toHaveCount(1);
  await expect(contactado.getByTestId('kanban-count')).toHaveText(String(before + 1));
  await expect(page.getByTestId('saved-stages')).toContainText(`Contactado ${before + 1}`);
  await expect(
    other.locator(`[data-testid="kanban-column"][data-stage="Contactado"] [data-record="${record}"]`),
  ).toHaveCount(1);
  await expect(other.getByTestId('saved-stages')).toContainText(`Contactado ${before + 1}`);
  await other.close();
  await shot(page, 'kanban');

  await page.reload();
  await hydrated(page);
  await expect(page.locator(`[data-testid="kanban-column"][data-stage="Contactado"] [data-record="${record}"]`)).toHaveCount(1);

  // Drag and drop moves it on.
  const target = page.locator('[data-testid="kanban-column"][data-stage="En conversación"]');
  // Grab the card by its edge (its middle is the select).
  await page.locator(`[data-record="${record}"]`).dragTo(target, { sourcePosition: { x: 4, y: 4 }, targetPosition: { x: 20, y: 12 } });
  await expect(target.locator(`[data-record="${record}"]`)).toHaveCount(1);
  // And "deshacer" on the move's receipt puts it back where it was.
  await expect(page.getByTestId('move-receipt')).toContainText('pasó a En conversación');
  await page.getByTestId('move-undo').click();
  await expect(page.locator(`[data-testid="kanban-column"][data-stage="Contactado"] [data-record="${record}"]`)).toHaveCount(1);

  // Tabla: sortable columns.
  await page.getByTestId('view-table').click();
  const table = page.getByTestId('record-table');
  await expect(table.getByTestId('table-row').first()).toBeVisible();
  await table.getByRole('button', { name: 'Empresa' }).click();
  await expect(table.getByRole('columnheader', { name: /Empresa/ })).toHaveAttribute('aria-sort', 'ascending');
  const names = await table.locator('[data-testid="table-row"] td:first-child').allInnerTexts();
  const sorted = [...names].sort((a, b) => a.localeCompare(b, 'es', { sensitivity: 'base' }));
  expect(names.slice(0, 5)).toEqual(sorted.slice(0, 5));
});

test('after the websocket drops mid-turn the chat and the board end as an uninterrupted run would', async ({ page }) => {
  // Keep a handle on every socket the app opens, to drop them like a bad network would.
  await page.addInitScript(() => {
    const Native = window.WebSocket;
    const sockets: WebSocket[] = [];
    (window as unknown as { __sockets: WebSocket[] }).__sockets = sockets;
    window.WebSocket = class extends Native {
      constructor(url: string | URL, protocols?: string | string[]) {
        super(url, protocols);
        sockets.push(this);
      }
    } as typeof WebSocket;
  });
  await page.setViewportSize({ width: 1280, height: 900 });
  await login(page, OWNER);
  await hydrated(page);
  await expect(page.getByRole('button', { name: 'Enviar' })).toBeEnabled();
  const people = page.getByTestId('person-message');
  const before = await people.count();

  const answers = page.getByTestId('luna-message');
  const answered = await answers.count();
  const sockets = () => page.evaluate(() => (window as unknown as { __sockets: WebSocket[] }).__sockets.length);
  await send(page, SCENE);
  // Drop the connection while the turn runs: its events land in the log meanwhile.
  await page.evaluate(() => (window as unknown as { __sockets: WebSocket[] }).__sockets.forEach((s) => s.close()));
  await expect.poll(sockets).toBeGreaterThan(1); // it reconnected
  await expect(answers).toHaveCount(answered + 1, { timeout: 30_000 });
  await expect(page.getByText('Luna está trabajando…')).toHaveCount(0, { timeout: 30_000 });
  await expect(people).toHaveCount(before + 1);
  const live = await page.getByTestId('chat-log').innerText();
  const board = await page.locator('#board-pane').innerText();

  // A fresh load folds the log from scratch: chat and board must read exactly the same.
  await page.reload();
  await hydrated(page);
  await expect(answers).toHaveCount(answered + 1);
  // Polled: the lazily loaded parts (saved list, cards, «deshacer») render a moment
  // after the rest of the reloaded page.
  await expect.poll(() => page.getByTestId('chat-log').innerText()).toBe(live);
  await expect(page.getByTestId('selection-card').first()).toBeVisible();
  await expect.poll(() => page.locator('#board-pane').innerText()).toBe(board);
});

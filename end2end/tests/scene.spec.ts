// The seed scene (004 §1) from one message to the sequence card, the person only
// tapping cards, as the two people who use it most:
// a salesperson at a desk (split view, evidence drawer, save card, priced contacts,
// a sequence authorized step by step) and the same person on a phone (390×844,
// through the Chat · Tablero · Decisiones tabs, with no horizontal scrolling), where
// the contacts revealed at the desk are not offered (nor charged) again.
// Screenshots of every stage are kept in artifacts/ (CI keeps them).
import { expect, Locator, Page, test } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';
import { MEMBER, hydrated, login, newConversation, shot } from './helpers';

// The scene runs on its own fresh Luna (.ci/e2e starts it), as a new team meets it:
// no other spec has saved or revealed anything there.
const SCENE_URL = process.env.LUNA_E2E_SCENE_URL;
const DATA_DIR = SCENE_URL ? process.env.LUNA_E2E_SCENE_DATA_DIR : process.env.LUNA_E2E_DATA_DIR;
if (SCENE_URL) test.use({ baseURL: SCENE_URL });

const SCENE =
  'Quiero 40 fabricantes de empaque en Jalisco que ya le hayan vendido a gobierno. Guárdamelos, consígueme el correo de los 10 mejores y ármame una secuencia de tres correos.';

async function freshConversation(page: Page) {
  await login(page, MEMBER);
  await expect(page).toHaveURL(/\/$/);
  await hydrated(page);
  await newConversation(page);
}

async function send(page: Page, text: string) {
  await page.getByLabel('Mensaje para Luna').fill(text);
  await page.getByRole('button', { name: 'Enviar' }).click();
}

/** Waits for Luna's answer to the n-th message of the conversation. */
async function answered(page: Page, n: number) {
  await expect(page.getByTestId('luna-message')).toHaveCount(n, { timeout: 45_000 });
  await expect(page.getByText('Luna está trabajando…')).toHaveCount(0, { timeout: 30_000 });
}

async function noHorizontalScroll(page: Page) {
  const { overflow, culprits } = await page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    // The innermost visible elements that stick out past the viewport, to name the bug.
    const culprits = [...document.querySelectorAll<HTMLElement>('body *')]
      .filter((el) => el.getBoundingClientRect().right > width + 1 && el.offsetParent !== null)
      .filter((el) => ![...el.children].some((c) => c.getBoundingClientRect().right > width + 1))
      .slice(0, 5)
      .map((el) => `${el.tagName.toLowerCase()}.${el.className} «${(el.textContent ?? '').slice(0, 60)}»`);
    return { overflow: document.documentElement.scrollWidth - width, culprits };
  });
  expect(overflow, culprits.join('\n')).toBeLessThanOrEqual(0);
}

/** The messages in the server's local outbox (.ci/e2e passes its data directory). */
function outbox(): string[] {
  const dir = path.join(DATA_DIR ?? '', 'outbox');
  if (!DATA_DIR || !fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).filter((f) => f.endsWith('.eml')).map((f) => path.join(dir, f));
}

/** Only the ticked step was authorized: one send per recipient, and only those go out. */
async function onlyFirstStepAuthorized(page: Page, before: string[]) {
  await expect(page.getByTestId('decision-result').last()).toContainText('Autoricé 1 paso ');
  const rows = page.getByTestId('sequence-progress');
  await expect(rows).toHaveCount(10);
  for (const text of await rows.allInnerTexts()) {
    // Each recipient has exactly one send (the first step), pending (with when it goes
    // out, in the recipient's local time) or already sent.
    expect(text).toMatch(/ · (1 enviados · 0 pendientes|0 enviados · 1 pendientes · próximo envío: .+)$/);
  }
  if (!DATA_DIR) return;
  // The dispatcher sends the first step now (day 0): one message per recipient, no more.
  const fresh = () => outbox().filter((f) => !before.includes(f));
  await expect.poll(() => fresh().length, { timeout: 45_000 }).toBe(10);
  const to = fresh().map((f) => /^To: (.*)$/m.exec(fs.readFileSync(f, 'utf8'))?.[1]);
  expect(new Set(to).size).toBe(10);
  await expect(page.getByTestId('sequence-progress').filter({ hasText: '1 enviados · 0 pendientes' })).toHaveCount(10);
}

async function authorizeFirstStep(card: Locator) {
  await expect(card).toHaveAttribute('data-kind', 'revisar_secuencia');
  const steps = card.getByTestId('sequence-steps').locator('input[type="checkbox"]');
  await expect(steps).toHaveCount(3);
  // With no step ticked there is nothing to authorize.
  for (let i = 0; i < 3; i++) await steps.nth(i).uncheck();
  await expect(card.getByRole('button', { name: 'Autorizar' })).toBeDisabled();
  // The person authorizes the first email only; the other two stay drafts.
  await steps.first().check();
  await expect(card.getByRole('button', { name: 'Autorizar' })).toBeEnabled();
  await card.getByRole('button', { name: 'Autorizar' }).click();
}

test('browser: the whole scene in the split view, with the drawer, the save card, contacts and a sequence', async ({ page }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await freshConversation(page);

  await send(page, SCENE);
  await answered(page, 1);
  const cards = page.getByTestId('decision-card');
  await expect(cards).toHaveCount(1);
  await expect(cards.first()).toHaveAttribute('data-kind', 'guardar_en_crm');
  const selection = page.getByTestId('selection-card');
  await expect(selection).toHaveCount(40);
  await shot(page, 'browser-1-selection');

  // The evidence behind a card, without leaving the page.
  await selection.first().click();
  const drawer = page.getByRole('dialog');
  await expect(drawer).toBeVisible();
  await expect(drawer).toContainText('Adjudicaciones');
  await shot(page, 'browser-2-drawer');
  await page.keyboard.press('Escape');
  await expect(drawer).toHaveCount(0);

  await cards.first().getByRole('button', { name: 'Guardar' }).click();
  await expect(page.getByRole('region', { name: 'Lista guardada' })).toContainText('40 empresas');
  await shot(page, 'browser-3-saved');

  // One message asked for three things: once the save card is accepted, Luna goes on
  // with the contacts by herself (a new answer, no new message from the person).
  await answered(page, 2);
  await expect(cards.first()).toHaveAttribute('data-kind', 'revelar_contactos');
  await expect(cards.first().getByTestId('decision-price')).toContainText('créditos de contacto');
  await shot(page, 'browser-4-contacts-card');
  await cards.first().getByRole('button', { name: 'Revelar' }).click();
  await expect(page.getByTestId('decision-result').last()).toContainText('Revelé');

  // …and then with the sequence.
  await answered(page, 3);
  await expect(page.getByTestId('person-message')).toHaveCount(1);
  const before = outbox();
  await authorizeFirstStep(cards.first());
  await expect(cards).toHaveCount(0);
  await expect(page.getByTestId('sequence-card')).toHaveCount(1);
  await onlyFirstStepAuthorized(page, before);
  await expect(page.getByTestId('sequence-status')).not.toHaveText('Borrador · nada se envía');
  await shot(page, 'browser-5-sequence');

  // What the person saw live is what a fresh load folds from the log.
  const chat = await page.getByTestId('chat-log').innerText();
  await page.reload();
  await hydrated(page);
  await expect(page.getByTestId('luna-message')).toHaveCount(3);
  // Polled: lazily loaded parts of the chat render a moment after the rest.
  await expect.poll(() => page.getByTestId('chat-log').innerText()).toBe(chat);
});

test('mobile 390×844: the same scene through the Chat, Tablero and Decisiones tabs', async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await freshConversation(page);
  const tab = (name: RegExp) => page.getByRole('tab', { name });

  await send(page, SCENE);
  await answered(page, 1);
  await noHorizontalScroll(page);
  await shot(page, 'mobile-1-chat');

  // The board is a tab; its badge counts the new selection.
  await tab(/Tablero/).click();
  await expect(page.getByTestId('selection-card')).toHaveCount(40);
  await noHorizontalScroll(page);
  await shot(page, 'mobile-2-board');

  await tab(/Decisiones/).click();
  const card = page.getByTestId('decision-card');
  await expect(card).toHaveCount(1);
  await card.getByRole('button', { name: 'Guardar' }).click();
  // (No «no cards» moment to wait for: the contacts card may follow at once.)
  await tab(/Tablero/).click();
  await expect(page.getByTestId('kanban')).toBeVisible();
  await noHorizontalScroll(page);
  await shot(page, 'mobile-3-saved');

  // The contacts come next on their own, but the scene above (same workspace) revealed
  // these ten already: no card that would cost nothing; Luna says so in the chat and
  // goes straight on to the sequence card.
  await tab(/Decisiones/).click();
  await expect(card).toHaveAttribute('data-kind', 'revisar_secuencia', { timeout: 45_000 });
  await tab(/Chat/).click();
  await expect(page.getByTestId('luna-message').last()).toContainText('Esos contactos ya los revelaste');
  await noHorizontalScroll(page);
  await shot(page, 'mobile-4-contacts-on-file');
  await tab(/Decisiones/).click();
  await authorizeFirstStep(card);
  await expect(card).toHaveCount(0);
  await tab(/Tablero/).click();
  await expect(page.getByTestId('sequence-card')).toHaveCount(1);
  await noHorizontalScroll(page);
  await shot(page, 'mobile-5-sequence');
});

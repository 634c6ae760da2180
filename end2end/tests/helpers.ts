import { expect, Page } from '@playwright/test';

export const DEMO_PASSWORD = 'luna-demo-2026';
export const MEMBER = 'ventas@demo.luna.mx';
export const ADMIN = 'admin@demo.luna.mx';
export const OWNER = 'duena@demo.luna.mx';

/** Waits until the page's WebAssembly has hydrated (the app marks <body>). */
export async function hydrated(page: Page) {
  await expect(page.locator('body[data-hydrated="true"]')).toHaveCount(1);
}

/**
 * Starts a new conversation: an empty chat and board, whatever earlier specs left. The
 * button opens the session and reloads the page, so this waits for that load: checked
 * on the old page, an empty chat can pass before the reload (an earlier spec may have
 * left a new conversation), and a message typed then goes to the old session and is
 * lost from view when the page reloads.
 */
export async function newConversation(page: Page) {
  await Promise.all([page.waitForEvent('load'), page.getByTestId('new-session').click()]);
  await hydrated(page);
  await expect(page.getByTestId('person-message')).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Enviar' })).toBeEnabled();
}

export async function login(page: Page, email: string, password = DEMO_PASSWORD) {
  await page.goto('/login');
  await hydrated(page);
  await page.getByLabel('Correo').fill(email);
  await page.getByLabel('Contraseña').fill(password);
  await page.getByRole('button', { name: 'Entrar' }).click();
}

export async function shot(page: Page, name: string) {
  await page.screenshot({ path: `artifacts/${name}.png`, fullPage: true });
}

/** Declines whatever an earlier test left pending, so the chat can search again.
 *  Counts the board's list items, which exist as soon as the session's snapshot is
 *  on screen (the composer is enabled then); the cards inside them load a moment later.
 *  The composer is found by CSS, not by role: on a phone it sits in the hidden Chat tab. */
export async function clearPending(page: Page) {
  await expect(page.locator('#composer ~ button[type="submit"]')).toBeEnabled();
  const items = page.getByTestId('pending-decision');
  for (let i = 0; i < 10 && (await items.count()) > 0; i++) {
    const before = await items.count();
    await items.first().getByRole('button', { name: 'Rechazar' }).click();
    await expect(items).toHaveCount(before - 1);
  }
}

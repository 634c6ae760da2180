// The app shell: login, split view, mobile tabs, access control (issue 2).
import { expect, test } from '@playwright/test';
import { ADMIN, hydrated, login, MEMBER, shot } from './helpers';

test('a logged-out visitor is redirected to the login page', async ({ page }) => {
  await page.goto('/');
  await expect(page).toHaveURL(/\/login$/);
  await expect(page.getByRole('button', { name: 'Entrar' })).toBeVisible();
});

test('a wrong password shows one Spanish message that does not reveal the account', async ({ page }) => {
  await login(page, MEMBER, 'contraseña-equivocada');
  await expect(page.getByRole('alert')).toHaveText('El correo o la contraseña no son correctos.');
  await login(page, 'nadie@demo.luna.mx', 'contraseña-equivocada');
  await expect(page.getByRole('alert')).toHaveText('El correo o la contraseña no son correctos.');
  await expect(page).toHaveURL(/\/login$/);
});

test('a member logs in and sees the split view with a resizable divider', async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await login(page, MEMBER);
  await expect(page).toHaveURL(/\/$/);
  await hydrated(page);
  await expect(page.getByTestId('user-name')).toHaveText('Lucía Hernández');
  const chat = page.getByRole('region', { name: 'Chat' });
  const board = page.getByRole('region', { name: 'Tablero' });
  await expect(chat).toBeVisible();
  await expect(board).toBeVisible();
  await expect(page.getByRole('tablist')).toBeHidden();
  // Members do not see the admin links.
  await expect(page.getByRole('link', { name: 'Ajustes' })).toHaveCount(0);

  const divider = page.getByTestId('divider');
  const before = (await chat.boundingBox())!.width;
  await divider.focus();
  for (let i = 0; i < 5; i++) await page.keyboard.press('ArrowRight');
  await expect.poll(async () => (await chat.boundingBox())!.width).toBeGreaterThan(before + 50);

  // Drag with the pointer to about a third of the width.
  const box = (await divider.boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + 100);
  await page.mouse.down();
  await page.mouse.move(1280 * 0.33, box.y + 100, { steps: 8 });
  await page.mouse.up();
  const dragged = (await chat.boundingBox())!.width;
  expect(Math.abs(dragged - 1280 * 0.33)).toBeLessThan(40);

  // The size is remembered across a reload.
  await page.reload();
  await hydrated(page);
  await expect.poll(async () => Math.round((await chat.boundingBox())!.width)).toBe(Math.round(dragged));
  await shot(page, 'desktop-split-view');
});

test('on a phone the same app shows tabs Chat, Tablero and Decisiones', async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await login(page, MEMBER);
  await hydrated(page);
  const tabs = page.getByRole('tablist', { name: 'Secciones' });
  await expect(tabs).toBeVisible();
  await expect(page.getByRole('region', { name: 'Chat' })).toBeVisible();
  await expect(page.getByRole('region', { name: 'Tablero' })).toBeHidden();
  await shot(page, 'mobile-tab-chat');

  await page.getByRole('tab', { name: 'Tablero' }).click();
  await expect(page.getByRole('tab', { name: 'Tablero' })).toHaveAttribute('aria-selected', 'true');
  await expect(page.getByRole('region', { name: 'Chat' })).toBeHidden();
  await expect(page.getByRole('region', { name: 'Selección' })).toBeVisible();
  await expect(page.getByRole('region', { name: 'Decisiones pendientes' })).toBeHidden();
  await shot(page, 'mobile-tab-board');

  await page.getByRole('tab', { name: 'Decisiones' }).click();
  await expect(page.getByRole('region', { name: 'Decisiones pendientes' })).toBeVisible();
  await expect(page.getByRole('region', { name: 'Selección' })).toBeHidden();
  // No horizontal scrolling on a phone.
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow).toBeLessThanOrEqual(0);
});

test('a server function called without a session answers 401', async ({ request }) => {
  const res = await request.post('/api/whoami', { data: {} });
  expect(res.status()).toBe(401);
});

test('a member cannot open the admin settings page but an admin can', async ({ page, browser }) => {
  await login(page, MEMBER);
  await expect(page).toHaveURL(/\/$/);
  const res = await page.goto('/ajustes');
  expect(res!.status()).toBe(403);
  await expect(page.getByText('No tienes permiso para ver esta página.')).toBeVisible();

  const adminContext = await browser.newContext();
  const admin = await adminContext.newPage();
  await login(admin, ADMIN);
  await expect(admin).toHaveURL(/\/$/);
  const ok = await admin.goto('/ajustes');
  expect(ok!.status()).toBe(200);
  await expect(admin.getByRole('heading', { name: 'Ajustes del espacio de trabajo' })).toBeVisible();
  await expect(admin.getByText('ventas@demo.luna.mx')).toBeVisible();
  await adminContext.close();
});

test('logging out ends the session', async ({ page }) => {
  await login(page, MEMBER);
  await expect(page).toHaveURL(/\/$/);
  await hydrated(page);
  await page.getByRole('button', { name: 'Salir' }).click();
  await expect(page).toHaveURL(/\/login$/);
  await page.goto('/');
  await expect(page).toHaveURL(/\/login$/);
});

test('a tab left open goes to the login page once the person logged out elsewhere', async ({ page, context }) => {
  test.setTimeout(60_000);
  await login(page, MEMBER);
  await hydrated(page);
  await expect(page.getByRole('button', { name: 'Enviar' })).toBeEnabled();
  // Another tab of the same browser logs out: the server closes the first tab's live
  // socket (1008) at its next check, and that tab must not keep reconnecting.
  const other = await context.newPage();
  await other.goto('/');
  await hydrated(other);
  await other.getByRole('button', { name: 'Salir' }).click();
  await expect(other).toHaveURL(/\/login$/);
  await expect(page).toHaveURL(/\/login$/, { timeout: 45_000 });
});

test('the tool reference lists the registry tools with their Spanish labels', async ({ page }) => {
  await login(page, MEMBER);
  await expect(page).toHaveURL(/\/$/);
  await page.goto('/herramientas');
  const table = page.getByTestId('tools-table');
  await expect(table).toContainText('usage');
  await expect(table).toContainText('Consultando tus créditos');
});

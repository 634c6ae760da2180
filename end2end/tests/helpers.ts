import { expect, Page } from '@playwright/test';

export const DEMO_PASSWORD = 'luna-demo-2026';
export const MEMBER = 'ventas@demo.luna.mx';
export const ADMIN = 'admin@demo.luna.mx';
export const OWNER = 'duena@demo.luna.mx';

/** Waits until the page's WebAssembly has hydrated (the app marks <body>). */
export async function hydrated(page: Page) {
  await expect(page.locator('body[data-hydrated="true"]')).toHaveCount(1);
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

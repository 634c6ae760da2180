// A newcomer's first impression (issue 25): every page loads without a console error
// or a failed request (a missing favicon is a 404 in the console), and Chromium finds
// a valid web app manifest and reports Luna installable.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, expect, Page, test } from '@playwright/test';
import { OWNER, hydrated, login } from './helpers';

/** Collects everything a person with the console open would see go wrong. */
function watch(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console error on ${page.url()}: ${msg.text()} ${JSON.stringify(msg.location())}`);
  });
  page.on('pageerror', (err) => problems.push(`uncaught on ${page.url()}: ${err.message}`));
  page.on('requestfailed', (req) => {
    // A navigation away cancels requests still in flight; that is not a failure.
    if (req.failure()?.errorText !== 'net::ERR_ABORTED') problems.push(`failed ${req.url()}: ${req.failure()?.errorText}`);
  });
  page.on('response', (res) => {
    if (res.status() >= 400) problems.push(`${res.status()} ${res.request().method()} ${res.url()}`);
  });
  return problems;
}

/** Lets late requests (icons, the manifest, lazy chunks) finish before counting. */
async function settle(page: Page) {
  await page.waitForLoadState('networkidle');
}

for (const [name, size] of [
  ['desktop', { width: 1280, height: 800 }],
  ['phone', { width: 390, height: 844 }],
] as const) {
  test(`every page loads without a console error or a failed request (${name})`, async ({ page }) => {
    const problems = watch(page);
    await page.setViewportSize(size);
    await page.goto('/login');
    await hydrated(page);
    await settle(page);

    await login(page, OWNER);
    await expect(page).toHaveURL(/\/$/);
    await hydrated(page);
    await expect(page.getByRole('button', { name: 'Enviar' })).toBeEnabled();
    await settle(page);

    // Every route of app/src/lib.rs; the owner may open them all.
    for (const path of ['/herramientas', '/ajustes', '/conocimiento', '/']) {
      await page.goto(path);
      await hydrated(page);
      await settle(page);
    }
    // Client-side navigation loads the lazy routes' chunks too.
    await page.getByRole('link', { name: 'Ajustes' }).first().click();
    await expect(page).toHaveURL(/\/ajustes$/);
    await settle(page);
    expect(problems).toEqual([]);
  });
}

// Chromium never offers to install from an incognito profile, which is what Playwright's
// contexts are ("in-incognito"), so this test opens a persistent profile. Chromium 156
// needs no service worker to install an app: a valid manifest with 192 and 512 px icons,
// served from a secure origin (127.0.0.1 counts), is enough.
test('the web app manifest is valid and Chromium reports Luna installable', async ({}, testInfo) => {
  const { baseURL, launchOptions, locale } = testInfo.project.use;
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'luna-profile-'));
  const context = await chromium.launchPersistentContext(profile, { ...launchOptions, baseURL, locale });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    const problems = watch(page);
    await login(page, OWNER);
    await expect(page).toHaveURL(/\/$/);
    await hydrated(page);
    await settle(page);

    const cdp = await context.newCDPSession(page);
    const manifest = await cdp.send('Page.getAppManifest');
    expect(manifest.url).toMatch(/\/manifest\.webmanifest$/);
    expect(manifest.errors).toEqual([]);
    const parsed = JSON.parse(manifest.data ?? '{}');
    expect(parsed.name).toBe('Luna');
    expect(parsed.start_url).toBe('/');
    expect(parsed.display).toBe('standalone');
    // Installability fetches the icons itself; an empty list means "installable".
    await expect
      .poll(async () => (await cdp.send('Page.getInstallabilityErrors')).installabilityErrors, { timeout: 15_000 })
      .toEqual([]);
    // Every icon the manifest names loads (the SVG alone would make it installable).
    for (const icon of parsed.icons as { src: string }[]) {
      const res = await page.request.get(icon.src);
      expect(res.status(), icon.src).toBe(200);
    }
    await settle(page);
    expect(problems).toEqual([]);
  } finally {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
});

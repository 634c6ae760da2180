// Accessibility (issue 10): every screen passes axe-core's WCAG 2 A/AA rules —
// colour contrast AA, names and roles on tabs, dialogs, cards and form fields — in
// the light and the dark theme (the theme follows the system setting).
import AxeBuilder from '@axe-core/playwright';
import { expect, Page, test } from '@playwright/test';
import { OWNER, hydrated, login } from './helpers';

async function audit(page: Page, where: string) {
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa']).analyze();
  const problems = result.violations.map(
    (v) =>
      `${v.id} (${v.impact}): ${v.help}\n` +
      v.nodes
        .slice(0, 4)
        .map((n) => `    ${n.target.join(' ')} — ${n.failureSummary?.split('\n').slice(1, 2).join('')}`)
        .join('\n'),
  );
  expect(problems, `${where}:\n${problems.join('\n')}`).toEqual([]);
}

for (const scheme of ['light', 'dark'] as const) {
  test(`every screen meets WCAG 2 AA in the ${scheme} theme`, async ({ page }) => {
    await page.emulateMedia({ colorScheme: scheme });
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto('/login');
    await hydrated(page);
    await audit(page, 'login');

    await login(page, OWNER);
    await expect(page).toHaveURL(/\/$/);
    await hydrated(page);
    // The split view with whatever the earlier suites left: chat lines, cards, the board.
    await audit(page, 'split view');

    const first = page.getByTestId('selection-card').first();
    if (await first.count()) {
      await first.click();
      await expect(page.getByRole('dialog')).toBeVisible();
      await audit(page, 'evidence drawer');
      await page.keyboard.press('Escape');
    }

    for (const path of ['/ajustes', '/conocimiento', '/herramientas']) {
      await page.goto(path);
      await hydrated(page);
      await audit(page, path);
    }

    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto('/');
    await hydrated(page);
    await audit(page, 'phone');
  });
}

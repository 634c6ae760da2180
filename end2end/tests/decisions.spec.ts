// Decision cards and auto mode (issue 7): an admin sets the workspace's auto budget;
// a member turns on "Automático con presupuesto", runs the scene and watches the
// counter move as Luna saves the list and reveals contacts inside the budget.
import { expect, test } from '@playwright/test';
import { ADMIN, MEMBER, clearPending, hydrated, login, newConversation } from './helpers';

test('an admin sets the auto-mode budget in Ajustes and it is kept', async ({ page }) => {
  await login(page, ADMIN);
  // Wait for the login to land before navigating, or the cookie may not be set yet.
  await expect(page).toHaveURL(/\/$/);
  await hydrated(page);
  await page.goto('/ajustes');
  await hydrated(page);
  const policy = page.getByTestId('auto-policy');
  await expect(policy.getByTestId('policy-credit-cap')).toHaveValue('50');
  await policy.getByTestId('policy-credit-cap').fill('60');
  await policy.getByTestId('policy-contact-cap').fill('12');
  await policy.getByTestId('policy-save').click();
  await expect(policy.getByRole('status')).toHaveText('Política guardada.');
  await page.reload();
  await hydrated(page);
  await expect(page.getByTestId('policy-credit-cap')).toHaveValue('60');
  await expect(page.getByTestId('policy-contact-cap')).toHaveValue('12');
});

test('in Preguntar mode the member accepts the save card, then a priced reveal card', async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 900 });
  await login(page, MEMBER);
  await expect(page).toHaveURL(/\/$/);
  await hydrated(page);
  await expect(page.getByRole('button', { name: 'Enviar' })).toBeEnabled();
  await clearPending(page);
  await expect(page.getByTestId('auto-counter')).toHaveCount(0);

  await page
    .getByLabel('Mensaje para Luna')
    .fill('Quiero 40 fabricantes de empaque en Jalisco que ya le hayan vendido a gobierno. Guárdamelos.');
  await page.getByRole('button', { name: 'Enviar' }).click();
  const card = page.getByTestId('decision-card');
  await expect(card).toHaveCount(1, { timeout: 30_000 });
  await expect(card).toHaveAttribute('data-kind', 'guardar_en_crm');
  await expect(card).toContainText('Se crearán');
  // The same card is inline in the chat.
  await expect(page.getByTestId('decision-inline')).toHaveCount(1);
  await card.getByRole('button', { name: 'Guardar' }).click();
  await expect(card).toHaveCount(0);
  await expect(page.getByTestId('decision-outcome').last()).toHaveText(' · Aceptada');
  await expect(page.getByRole('region', { name: 'Lista guardada' })).toContainText('40 empresas');

  await page.getByLabel('Mensaje para Luna').fill('consígueme el correo de los 5 mejores');
  await page.getByRole('button', { name: 'Enviar' }).click();
  await expect(card).toHaveCount(1, { timeout: 30_000 });
  await expect(card).toHaveAttribute('data-kind', 'revelar_contactos');
  await expect(card.getByTestId('decision-price')).toContainText('Costo: 10 créditos de contacto');
  await expect(card.getByTestId('decision-expiry')).toContainText('Vence en');
  await card.getByRole('button', { name: 'Revelar' }).click();
  await expect(card).toHaveCount(0);
  await expect(page.getByTestId('decision-result').last()).toContainText('Revelé 5 contactos');
});

test('a member runs the scene in auto mode and sees the counter move', async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 900 });
  await login(page, MEMBER);
  await expect(page).toHaveURL(/\/$/);
  await hydrated(page);
  await expect(page.getByRole('button', { name: 'Enviar' })).toBeEnabled();
  await clearPending(page);

  await page.getByTestId('mode-select').selectOption('automatico');
  // The panel is prefilled with the workspace's default (set by the admin above).
  await expect(page.getByTestId('auto-credit-cap')).toHaveValue('60');
  await page.getByTestId('auto-credit-cap').fill('50');
  await page.getByTestId('auto-activate').click();
  const counter = page.getByTestId('auto-counter');
  await expect(counter).toContainText('llevas 0 de 50 créditos');

  // Earlier tests may have saved in this conversation: count this save's receipt only.
  const saved = page.getByTestId('decision-result').filter({ hasText: 'Guardé' });
  const savedBefore = await saved.count();
  await page
    .getByLabel('Mensaje para Luna')
    .fill('Quiero 40 fabricantes de empaque en Jalisco que ya le hayan vendido a gobierno. Guárdamelos y consígueme el correo de los 10 mejores.');
  await page.getByRole('button', { name: 'Enviar' }).click();
  // Saving is level 1 and free: in auto it runs without a card and says so. (The
  // contacts follow at once, so the save's receipt need not be the last one.)
  await expect(saved).toHaveCount(savedBefore + 1, { timeout: 30_000 });
  await expect(saved.last()).toContainText('automático por la política que');
  await expect(page.getByRole('region', { name: 'Lista guardada' })).toContainText('40 empresas');

  // The same message asked for the contacts: Luna goes on by herself, inside the budget.
  await expect(page.getByTestId('decision-result').last()).toContainText('Revelé 10 contactos', { timeout: 30_000 });
  // Contacts revealed earlier in the workspace are not charged again.
  await expect(counter).toContainText(/llevas [1-9]\d* de 50 créditos/);
  await expect(page.getByTestId('decision-card')).toHaveCount(0);
  await page.screenshot({ path: 'artifacts/auto-mode.png' });

  // The counter is board state: a reload shows the same.
  const shown = await counter.innerText();
  await page.reload();
  await hydrated(page);
  await expect(page.getByTestId('auto-counter')).toHaveText(shown);

  // Auto mode dies with the session: a new conversation starts in Preguntar.
  await newConversation(page);
  await expect(page.getByText('Pídele a Luna lo que buscas.')).toBeVisible();
  await expect(page.getByTestId('auto-counter')).toHaveCount(0);
  await expect(page.getByTestId('mode-select')).toHaveValue('preguntar');
});


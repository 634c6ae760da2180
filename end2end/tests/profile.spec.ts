import { test, expect } from '@playwright/test';
import { ADMIN, hydrated, login } from './helpers';

test('an admin sets the commercial profile in Ajustes: cleaned, kept, and a bad state is refused', async ({ page }) => {
  await login(page, ADMIN);
  await expect(page).toHaveURL(/\/$/);
  await hydrated(page);
  await page.goto('/ajustes');
  await hydrated(page);
  const profile = page.getByTestId('profile');
  await profile.getByTestId('profile-oferta').fill('Empaque corrugado y etiquetas para alimentos');
  await profile.getByTestId('profile-giros').fill('alimentos, bebidas');
  await profile.getByTestId('profile-ticket').fill('$250,000');

  // A state that does not exist is named in a typed error; nothing is stored.
  await profile.getByTestId('profile-estados').fill('Jalisco, Narnia');
  await profile.getByTestId('profile-save').click();
  await expect(profile.getByRole('alert')).toContainText('«Narnia» no es una entidad federativa');

  await profile.getByTestId('profile-estados').fill('jalisco, edomex');
  await profile.getByTestId('profile-save').click();
  await expect(profile.getByRole('status')).toContainText('Perfil guardado');
  await page.reload();
  await hydrated(page);
  await expect(page.getByTestId('profile-oferta')).toHaveValue('Empaque corrugado y etiquetas para alimentos');
  await expect(page.getByTestId('profile-giros')).toHaveValue('alimentos, bebidas');
  // Stored in the catalogue's spelling.
  await expect(page.getByTestId('profile-estados')).toHaveValue('Jalisco, Estado de México');
  await expect(page.getByTestId('profile-ticket')).toHaveValue('250000');

  // Leave the demo workspace without a territory for the other tests' searches.
  await page.getByTestId('profile-estados').fill('');
  await page.getByTestId('profile-save').click();
  await expect(page.getByTestId('profile').getByRole('status')).toContainText('Perfil guardado');
});

/**
 * Debian's Chromium for the browser tests, driven by playwright-core: where it is, whether it is
 * there (a missing browser is a visible skip locally and a failure in CI), and one way to start it.
 *
 * The tests wait for what the page shows with Playwright's default of 30 s, never a shorter bound:
 * the page refreshes once a second, and on a loaded two-core CI machine one refresh has taken over
 * 3 s. A wait that ends early is the test's speed; only a page that never shows it fails.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { it } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const chromiumAvailable = existsSync(CHROMIUM);

/** The `skip` option of a browser suite; says once why it is skipped, and fails in CI. */
export function browserSuiteSkip(): false | string {
  if (chromiumAvailable) return false;
  console.log(`# browser test skipped: no Chromium at ${CHROMIUM} (apt-get install -y chromium)`);
  if (process.env.CI === 'true')
    it('has a Chromium to drive in CI', () => assert.fail(`CI=true but ${CHROMIUM} is missing`));
  return `no Chromium at ${CHROMIUM}`;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** The page's console errors and uncaught exceptions from now on, as they come (the tests assert none). */
export function collectConsoleErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  return errors;
}

/// <reference lib="dom" />
// The console's quality bar (issue 30, part 7), in real Chromium on a page with data in every
// section: no serious or critical accessibility violation (axe-core) in light and dark mode, at
// 1280 px and at 375 px; at 375 px nothing scrolls sideways and the header stays short; the
// controls are reached with the keyboard (Tab from the top reaches the section links and the
// buttons, each with a visible focus ring); JS+CSS stay under 250 kB; no console errors.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { mkdir, readFile } from 'node:fs/promises';
import { after, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { Leasehold } from '../../src/leasehold.js';
import { setGeneratorRunning } from '../../src/processes/generator.js';
import { startServer } from '../../src/service/server.js';
import { browserSuiteSkip, collectConsoleErrors, launchChromium } from '../support/chromium.js';
import { closeTestDatabase, withSchema } from '../support/database.js';

after(closeTestDatabase);

const AXE_SOURCE = await readFile(
  createRequire(import.meta.url).resolve('axe-core/axe.min.js'),
  'utf8',
);

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** axe-core's serious and critical findings on the page as it is now. */
async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's script-src policy does not govern.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(): Promise<{ violations: AxeViolation[] }> } })
      .axe;
    return (await axe.run()).violations;
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`,
    );
}

describe('console quality', { skip: browserSuiteSkip() }, () => {
  it('has no serious accessibility violation, fits 375 px, works from the keyboard, stays small', () =>
    withSchema('browser console quality', async (schema) => {
      const lh = Leasehold.fromEngine(await schema.engine());
      await setGeneratorRunning(lh, true, 'test');
      await lh.leases.acquire('quality-lease', { holder: 'tester', ttl: 60_000 });
      const emails = lh.queue('emails');
      await emails.enqueueMany([{ payload: { n: 1 } }, { payload: { n: 2 } }]);
      await lh.jobs.registerWorker({
        id: 'http-w',
        name: 'http-w',
        host: 'box',
        pid: 1,
        queues: ['emails'],
        concurrency: 1,
        kind: 'http',
      });
      const server = await startServer({ lh, port: 0 });
      const browser = await launchChromium();
      try {
        const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
        const consoleErrors = collectConsoleErrors(page);
        let assetBytes = 0;
        page.on('response', async (r) => {
          if (/\/assets\/.*\.(js|css)$/.test(r.url())) assetBytes += (await r.body()).length;
        });
        await page.goto(`${server.url}/`);
        await page.getByTestId('connection').filter({ hasText: 'live' }).waitFor();
        await page.getByText('quality-lease').first().waitFor();
        await page.getByText('http-w').first().waitFor();

        // The keyboard, on the page as loaded (focus at its top): Tab reaches the section links and then the
        // header's buttons, and whatever has focus shows a focus ring.
        const reached: string[] = [];
        for (let i = 0; i < 40 && !reached.includes('BUTTON:API key'); i++) {
          await page.keyboard.press('Tab');
          const focused = await page.evaluate(() => {
            const el = document.activeElement as HTMLElement | null;
            if (!el || el === document.body) return null;
            const style = getComputedStyle(el);
            const ring = style.outlineStyle !== 'none' && style.outlineWidth !== '0px';
            return { name: `${el.tagName}:${(el.textContent ?? '').trim()}`, ring };
          });
          if (!focused) continue;
          reached.push(focused.name);
          assert.ok(focused.ring, `${focused.name} shows where the focus is`);
        }
        assert.ok(reached.includes('A:Overview'), `Tab reaches the section links: ${reached}`);
        assert.ok(reached.includes('BUTTON:API key'), `Tab reaches the header buttons: ${reached}`);

        assert.deepEqual(await seriousViolations(page), [], 'light mode, 1280 px');
        await page.getByRole('button', { name: 'Dark' }).click();
        await page.waitForFunction(() => document.documentElement.dataset.theme === 'dark');
        assert.deepEqual(await seriousViolations(page), [], 'dark mode, 1280 px');

        await page.setViewportSize({ width: 375, height: 812 });
        await page.getByRole('heading', { name: 'Workers' }).waitFor();
        const layout = await page.evaluate(() => ({
          scrollWidth: document.documentElement.scrollWidth,
          headerHeight: document.querySelector('header')!.getBoundingClientRect().height,
        }));
        assert.ok(layout.scrollWidth <= 375, `nothing scrolls sideways (${layout.scrollWidth} px)`);
        assert.ok(layout.headerHeight < 812 / 4, `a short header (${layout.headerHeight} px)`);
        assert.deepEqual(await seriousViolations(page), [], 'dark mode, 375 px');
        await mkdir('test-results', { recursive: true });
        await page.screenshot({ path: 'test-results/console-375.png', fullPage: true });

        assert.ok(assetBytes > 0 && assetBytes < 250 * 1024, `JS+CSS is ${assetBytes} bytes`);
        assert.deepEqual(consoleErrors, [], 'no console errors');
      } finally {
        await browser.close();
        await server.close();
      }
    }));
});

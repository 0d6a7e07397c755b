// The console's trends and queues (issue 30 parts 4 and 5, decision 0265) in a real headless
// Chromium: jobs complete and the throughput chart gains a point above zero (the maintainer
// records the minute under way, the page refetches as the snapshot ticks); a queue paused in
// one tab shows paused, with a Resume button, in a second tab; the settings form shows a bad
// value's error beside its field and applies a good one; usable at 375 px; screenshots under
// test-results/; no console errors but the one 400 the bad value is meant to get.
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { after, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { Leasehold } from '../../src/leasehold.js';
import { startServer } from '../../src/service/server.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { browserSuiteSkip, launchChromium } from '../support/chromium.js';

after(closeTestDatabase);

const QUEUE = 'browser-trends';

/** Console errors of a page, but for the 400 the bad settings value is sent to get. */
function watchErrors(page: Page, errors: string[]): void {
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    const expected =
      /status of 400/.test(m.text()) && m.location().url.endsWith(`/${QUEUE}/settings`);
    if (!expected) errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
}

/** The values the chart plots, series by series (its hidden data element). */
async function chartValues(page: Page, chart: string): Promise<Record<string, number[]>> {
  const text =
    (await page.getByTestId(`chart-${chart}`).locator('data.chart-values').getAttribute('value')) ??
    '';
  return Object.fromEntries(
    text
      .split(';')
      .map((part) => part.split(':'))
      .map(([name, values]) => [
        name,
        (values ?? '').split(',').map((v) => (v === '' ? Number.NaN : Number(v))),
      ]),
  );
}

interface SeriesTest {
  chart: string;
  index: number;
  /** Some value above this. */
  above: number;
  /** The series has exactly this many values, when given. */
  length?: number;
}

/**
 * Runs in the page (a function, not a string: the page's CSP forbids eval). The test's own
 * TypeScript has no DOM types, hence the narrow view of `document`.
 */
function seriesHas(t: SeriesTest): boolean {
  const page = globalThis as unknown as {
    document: {
      querySelector(selector: string): { getAttribute(name: string): string | null } | null;
    };
  };
  const data = page.document.querySelector(`[data-testid="chart-${t.chart}"] data.chart-values`);
  const part = (data?.getAttribute('value') ?? '').split(';')[t.index] ?? '';
  const values = (part.split(':')[1] ?? '').split(',');
  return (
    (t.length === undefined || values.length === t.length) &&
    values.some((v) => v !== '' && Number(v) > t.above)
  );
}

describe('console: trends and queues in a browser', { skip: browserSuiteSkip() }, () => {
  it('draws a throughput chart that moves as jobs complete, shows a pause in a second tab, and applies the settings form with field errors', () =>
    withSchema('browser console trends', async (schema) => {
      const lh = Leasehold.fromEngine(await schema.engine());
      // The service's own maintainer records the trends; a short cycle keeps the test short.
      const server = await startServer({ lh, port: 0, maintenance: { interval: 300 } });
      let browser: Browser | undefined;
      try {
        browser = await launchChromium();
        const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
        const errors: string[] = [];
        watchErrors(page, errors);
        await lh.queue(QUEUE).enqueue({ n: 0 }); // the queue exists, nothing completed yet
        await page.goto(`${server.url}/`);
        await page.getByTestId('connection').filter({ hasText: 'live' }).waitFor();
        await page.getByRole('heading', { name: 'Trends' }).waitFor();
        await page.getByTestId('chart-throughput').waitFor();
        const before = await chartValues(page, 'throughput');
        assert.equal(before.completed?.length, 60, 'the hour, a point a minute');
        assert.ok(
          before.completed!.every((v) => v === 0),
          `nothing completed yet: ${before.completed}`,
        );

        // Jobs complete: the chart's newest point rises above zero without a reload.
        for (let i = 1; i <= 4; i++) await lh.queue(QUEUE).enqueue({ n: i });
        const worker = lh.worker({ queues: QUEUE, handler: async () => 'ok', concurrency: 5 });
        assert.equal((await worker.runUntilEmpty()).completed, 5);
        await page.waitForFunction(seriesHas, { chart: 'throughput', index: 0, above: 0 });
        const after = await chartValues(page, 'throughput');
        assert.equal(
          after.completed!.reduce((n, v) => n + v, 0),
          5,
          'five completions over the hour',
        );
        const pickup = await chartValues(page, 'pickup');
        assert.ok(
          pickup.p50!.some((v) => Number.isFinite(v)),
          'the pickup latency has a point',
        );
        const row = page.locator(`tr[data-queue-row="${QUEUE}"]`);
        await row
          .getByTestId('queue-completed')
          .filter({ hasText: /^[1-9]/ })
          .waitFor();

        // Pause in this tab; a second tab of the same browser sees it from its own stream.
        const second = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
        watchErrors(second, errors);
        await second.goto(`${server.url}/#queues`);
        const secondRow = second.locator(`tr[data-queue-row="${QUEUE}"]`);
        await secondRow.getByTestId('queue-paused').filter({ hasText: 'running' }).waitFor();
        await row.getByRole('button', { name: `Pause ${QUEUE}` }).click();
        await row.getByTestId('queue-paused').filter({ hasText: 'paused' }).waitFor();
        await secondRow.getByTestId('queue-paused').filter({ hasText: 'paused' }).waitFor();
        await secondRow.getByRole('button', { name: `Resume ${QUEUE}` }).waitFor();
        assert.equal((await lh.queue(QUEUE).settings()).paused, true, 'paused in the database');

        // The settings form: a bad value's error beside its field, then a good value applied.
        await row.getByRole('button', { name: `Settings of ${QUEUE}` }).click();
        const form = page.getByRole('form', { name: `Settings of ${QUEUE}` });
        await form.getByLabel('Concurrency').fill('0');
        await form.getByRole('button', { name: 'Save settings' }).click();
        const fieldError = form.getByTestId('error-concurrency');
        await fieldError.waitFor();
        assert.match(await fieldError.innerText(), /\S/);
        assert.equal(await form.getByLabel('Concurrency').getAttribute('aria-invalid'), 'true');
        assert.equal((await lh.queue(QUEUE).settings()).concurrency, null, 'nothing changed');
        await form.getByLabel('Concurrency').fill('7');
        await form.getByLabel('Rate limit').fill('50');
        await form.getByLabel('Rate window').fill('1s');
        await form.getByRole('button', { name: 'Save settings' }).click();
        await form.getByTestId('settings-status').filter({ hasText: 'Saved' }).waitFor();
        assert.equal(await form.getByTestId('error-concurrency').count(), 0);
        await row.getByTestId('queue-settings').filter({ hasText: '7 at once · 50/1s' }).waitFor();
        await secondRow
          .getByTestId('queue-settings')
          .filter({ hasText: '7 at once · 50/1s' })
          .waitFor();
        const stored = await lh.queue(QUEUE).settings();
        assert.equal(stored.concurrency, 7);
        assert.deepEqual(stored.rate, { limit: 50, per: 1_000 });
        assert.equal(stored.paused, true, 'the form left the paused state alone');

        // The day window: 288 points of five minutes.
        await page.getByRole('button', { name: 'Last day' }).click();
        await page.waitForFunction(seriesHas, {
          chart: 'throughput',
          index: 0,
          above: -1,
          length: 288,
        });

        await mkdir('test-results', { recursive: true });
        await page.locator('#queues').screenshot({ path: 'test-results/console-queues.png' });
        await page.getByRole('button', { name: 'Last hour' }).click();
        await page.locator('#trends').screenshot({ path: 'test-results/console-trends.png' });
        // Narrow: the sections fit 375 px (wide tables scroll inside their own box).
        await page.setViewportSize({ width: 375, height: 800 });
        for (const id of ['trends', 'queues']) {
          const fits = await page
            .locator(`#${id}`)
            .evaluate((el) => el.scrollWidth <= el.clientWidth + 1);
          assert.ok(fits, `#${id} fits 375 px`);
        }
        // The whole page: a section's own screenshot would scroll under the sticky header.
        await page.screenshot({ path: 'test-results/console-375.png', fullPage: true });
        await page.emulateMedia({ colorScheme: 'dark' });
        await page.getByRole('button', { name: 'Dark' }).click();
        await page.locator('#trends').screenshot({ path: 'test-results/console-trends-dark.png' });
        assert.deepEqual(errors, [], 'no console errors');
      } finally {
        await browser?.close();
        await server.close();
      }
    }));
});

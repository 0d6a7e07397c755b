// The job explorer and job detail (issue 30 parts 2 and 3, decision 0266) in a real headless
// Chromium: a deep link to a filter shows its jobs, the filter form narrows the list (payload
// text included) and writes the address, a reload restores it, a job that failed twice shows
// both attempts with their stacks and its timeline, a retry of the checked jobs is confirmed in
// a dialog and takes effect in the database, the retried job says why it is not running, and
// the page logs no console error. Screenshots go to test-results/.
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { after, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { Leasehold } from '../../src/leasehold.js';
import { startServer } from '../../src/service/server.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { browserSuiteSkip, collectConsoleErrors, launchChromium } from '../support/chromium.js';

after(closeTestDatabase);

describe('console: job explorer in a browser', { skip: browserSuiteSkip() }, () => {
  it('filters jobs, restores the filter from a deep link, shows a failed job’s attempts and timeline, retries a selection, without console errors', () =>
    withSchema('browser console jobs', async (schema) => {
      const lh = Leasehold.fromEngine(await schema.engine());
      const mail = lh.queue('mail');
      const [globex1, globex2, initech] = await mail.enqueueMany(
        ['ceo@globex.test', 'ops@globex.test', 'it@initech.test'].map((to) => ({
          payload: { to, fail: true },
          options: { type: 'welcome', maxAttempts: 2 },
        })),
      );
      await mail.enqueue({ to: 'ok@globex.test' }, { type: 'welcome' });
      await lh.queue('other').enqueue({ to: 'ceo@globex.test', fail: true }, { maxAttempts: 1 });
      // Every failing job fails twice (no backoff) and dies; the other completes.
      const worker = lh.worker({
        queues: ['mail', 'other'],
        concurrency: 2,
        flushWindow: 0,
        retryBackoff: { baseMs: 0, capMs: 0 },
        handler: async (job) => {
          if ((job.payload as { fail?: boolean }).fail) throw new Error('mailbox unavailable');
          return 'sent';
        },
      });
      const ran = await worker.runUntilEmpty({ timeout: '30s' });
      assert.equal(ran.dead, 4, JSON.stringify(ran));
      assert.equal((await lh.jobs.get(globex1!.id))?.errors.length, 2, 'failed twice');

      const server = await startServer({ lh, port: 0 });
      let browser: Browser | undefined;
      try {
        browser = await launchChromium();
        const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
        const consoleErrors = collectConsoleErrors(page);
        const explorer = page.locator('#explorer');
        const rows = explorer.locator('[data-testid="explorer-jobs"] tbody tr[data-job]');
        const shownIds = async (): Promise<number[]> =>
          await rows.evaluateAll((trs) => trs.map((tr) => Number(tr.getAttribute('data-job'))));

        // A deep link to a filter: the dead jobs of `mail`, newest first.
        await page.goto(`${server.url}/#jobs?queue=mail&status=dead`);
        await explorer
          .getByTestId('explorer-total')
          .filter({ hasText: /^3 jobs match/ })
          .waitFor();
        assert.deepEqual(await shownIds(), [initech!.id, globex2!.id, globex1!.id]);

        // The form narrows by payload text and writes the filter into the address.
        await explorer.getByLabel('Text in payload').fill('GLOBEX');
        await explorer.getByRole('button', { name: 'Search' }).click();
        await explorer
          .getByTestId('explorer-total')
          .filter({ hasText: /^2 jobs match/ })
          .waitFor();
        assert.deepEqual(await shownIds(), [globex2!.id, globex1!.id]);
        assert.equal(new URL(page.url()).hash, '#jobs?queue=mail&text=GLOBEX&status=dead');

        // A reload restores the filter: the form and the list.
        await page.reload();
        await explorer
          .getByTestId('explorer-total')
          .filter({ hasText: /^2 jobs match/ })
          .waitFor();
        assert.equal(await explorer.getByLabel('Text in payload').inputValue(), 'GLOBEX');
        assert.equal(await explorer.getByLabel('Queue').inputValue(), 'mail');
        assert.ok(await explorer.getByRole('checkbox', { name: 'dead', exact: true }).isChecked());

        // The detail of a job that failed twice: both attempts with message and stack, a timeline.
        await explorer.getByRole('link', { name: `#${globex1!.id}` }).click();
        const detail = explorer.getByRole('dialog', { name: `job ${globex1!.id}` });
        await detail.waitFor();
        assert.equal(new URL(page.url()).hash, `#job/${globex1!.id}`);
        const attempts = detail.getByTestId('job-attempts').locator('> li');
        assert.equal(await attempts.count(), 2);
        assert.match(await attempts.first().innerText(), /attempt 1 .*Error: mailbox unavailable/s);
        await attempts.first().getByText('Stack').click();
        assert.match(await attempts.first().locator('pre').innerText(), /^\s+at /);
        const timeline = await detail.getByTestId('job-timeline').innerText();
        assert.match(timeline, /enqueued[\s\S]*attempt 1 failed[\s\S]*attempt 2 failed/);
        assert.match(timeline, /claimed \(latest claim\)\s+by \S+, generation 2/);
        assert.match(timeline, /dead$/m);
        await detail.getByRole('button', { name: 'Close' }).click();
        await detail.waitFor({ state: 'detached' });

        // Retry the checked jobs: confirmed in a dialog, then done in the database.
        await explorer.getByRole('checkbox', { name: 'Select every job on this page' }).check();
        await explorer.getByRole('button', { name: 'Retry selected (2)' }).click();
        const confirm = page.getByRole('dialog', { name: 'Confirm' });
        await confirm.getByText('Retry 2 selected jobs?').waitFor();
        await confirm.getByRole('button', { name: 'Retry' }).click();
        await explorer
          .getByTestId('explorer-outcome')
          .filter({ hasText: 'Retry: 2 done' })
          .waitFor();
        for (const job of [globex1, globex2])
          assert.equal((await lh.jobs.get(job!.id))?.status, 'pending', `#${job!.id} retried`);
        assert.equal((await lh.jobs.get(initech!.id))?.status, 'dead', 'not selected: untouched');
        await explorer
          .getByTestId('explorer-total')
          .filter({ hasText: /^0 jobs match/ })
          .waitFor();

        // The retried job waits, and says why: no worker lists its queue now.
        await page.goto(`${server.url}/#job/${globex1!.id}`);
        const retried = explorer.getByRole('dialog', { name: `job ${globex1!.id}` });
        await retried.getByTestId('job-explain').filter({ hasText: 'no-worker' }).waitFor();

        await mkdir('test-results', { recursive: true });
        await page.screenshot({ path: 'test-results/console-jobs.png', fullPage: true });
        await page.setViewportSize({ width: 375, height: 800 });
        await page.goto(`${server.url}/#jobs?queue=mail`);
        await explorer
          .getByTestId('explorer-total')
          .filter({ hasText: /^4 jobs match/ })
          .waitFor();
        await page.screenshot({ path: 'test-results/console-jobs-375.png', fullPage: true });
        assert.deepEqual(consoleErrors, [], 'no console errors');
      } finally {
        await browser?.close();
        await server.close();
      }
    }));
});

// Leases and elections over time in a real headless Chromium (issue 30 part 6, decision 0267):
// a lease held by worker-a runs out and worker-b takes it over; clicking the resource in the
// Leases section opens its terms, which show worker-a's term `expired` and worker-b's marked as
// a takeover. The same for an election in the Leaders section. It waits for DOM states (the
// lease shown expired, the rows of the timeline), never a fixed time; screenshots under
// test-results/, and no console errors.
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { after, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { Leasehold } from '../../src/leasehold.js';
import { startServer } from '../../src/service/server.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { browserSuiteSkip, collectConsoleErrors, launchChromium } from '../support/chromium.js';

after(closeTestDatabase);

const RESOURCE = 'orders/sync';
const ELECTION = 'primary';
/** Short enough to run out during the test; the page is waited on to show it expired. */
const SHORT_TTL = 1_500;

describe('console: lease and election history in a browser', { skip: browserSuiteSkip() }, () => {
  it('shows an expired term and the takeover that followed it, for a lease and for an election, without console errors', () =>
    withSchema('browser console history', async (schema) => {
      const lh = Leasehold.fromEngine(await schema.engine());
      await lh.leases.setTermRecording(true);
      const server = await startServer({ lh, port: 0 });
      let browser: Browser | undefined;
      try {
        browser = await launchChromium();
        const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
        const consoleErrors = collectConsoleErrors(page);
        await page.goto(`${server.url}/`);
        await page.getByTestId('connection').filter({ hasText: 'live' }).waitFor();

        // worker-a holds the lease, and node-1 leads the election, for a short while.
        const first = await lh.leases.acquire(RESOURCE, { holder: 'worker-a', ttl: SHORT_TTL });
        assert.ok(first, 'worker-a took the free lease');
        const lockName = `leasehold:election:${ELECTION}`;
        const leader = await lh.engine.leaseLockAcquire({
          name: lockName,
          holder: 'node-1',
          ttlMs: SHORT_TTL,
        });
        assert.ok(leader.acquired);

        // Both run out: the page shows them expired (on the database's clock).
        await page.getByRole('group', { name: 'Filter leases' }).getByText('all').click();
        const leaseRow = page.locator(`tr[data-resource="${RESOURCE}"]`);
        await leaseRow.locator('.pill.expired').waitFor();
        const electionRow = page.locator(`tr[data-election="${ELECTION}"]`);
        await electionRow.locator('.pill.expired').waitFor();

        // worker-b and node-2 take over.
        const second = await lh.leases.acquire(RESOURCE, { holder: 'worker-b', ttl: 60_000 });
        assert.ok(second, 'worker-b took the expired lease over');
        const next = await lh.engine.leaseLockAcquire({
          name: lockName,
          holder: 'node-2',
          ttlMs: 60_000,
        });
        assert.ok(next.acquired);
        await leaseRow.getByText('worker-b').waitFor();

        // The lease's terms: worker-b's (held, a takeover), then worker-a's (expired).
        await leaseRow.getByRole('button', { name: RESOURCE }).click();
        const leaseTerms = page.getByRole('region', { name: `Lease ${RESOURCE}: terms` });
        await leaseTerms.locator(`tr[data-token="${first.token}"]`).waitFor();
        const newest = leaseTerms.locator(`tr[data-token="${second.token}"]`);
        const oldest = leaseTerms.locator(`tr[data-token="${first.token}"]`);
        assert.equal(await leaseTerms.locator('tbody tr').count(), 2);
        assert.match(await newest.innerText(), /worker-b\s*takeover/);
        assert.match(await newest.innerText(), /\bheld\b/);
        assert.match(await oldest.innerText(), /worker-a/);
        assert.match(await oldest.innerText(), /\bexpired\b/);
        assert.equal(await oldest.locator('.pill.takeover').count(), 0);
        assert.equal(await leaseTerms.getByTestId('recording-off').count(), 0);
        assert.equal(await leaseTerms.locator('svg.term-bar').count(), 2);

        // The election's terms likewise, in the Leaders section.
        await electionRow.getByTestId('leader').filter({ hasText: 'node-2' }).waitFor();
        await electionRow.getByRole('button', { name: ELECTION }).click();
        const electionTerms = page.getByRole('region', { name: `Election ${ELECTION}: terms` });
        await electionTerms.locator(`tr[data-token="${leader.lease.token}"]`).waitFor();
        assert.match(
          await electionTerms.locator(`tr[data-token="${next.lease.token}"]`).innerText(),
          /node-2\s*takeover/,
        );
        assert.match(
          await electionTerms.locator(`tr[data-token="${leader.lease.token}"]`).innerText(),
          /node-1[\s\S]*expired/,
        );

        await mkdir('test-results', { recursive: true });
        await leaseTerms.scrollIntoViewIfNeeded();
        await page.screenshot({ path: 'test-results/console-history.png', fullPage: true });
        // Usable at 375 px: the timeline's table scrolls inside its own box.
        await page.setViewportSize({ width: 375, height: 812 });
        await leaseTerms.getByRole('button', { name: 'Close' }).waitFor();
        await page.screenshot({ path: 'test-results/console-history-375.png', fullPage: true });
        await leaseTerms.getByRole('button', { name: 'Close' }).click();
        await leaseTerms.waitFor({ state: 'detached' });

        assert.deepEqual(consoleErrors, [], 'no console errors');
      } finally {
        await browser?.close();
        await server.close();
        await lh.close();
      }
    }));
});

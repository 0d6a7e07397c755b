// The dashboard mounted under a prefix of someone else's server (issue 29, part 4; decision
// 0262), in a real headless Chromium: an Express 5 app serves leasehold at /leasehold; the
// browser opens /leasehold (no slash), lands on /leasehold/, its event stream goes live, a lease
// acquired through the API appears, and a click reaches the API (the generator stops): every
// URL the page uses is under the mount, and there are no console errors.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import express from 'express';
import type { Browser } from 'playwright-core';
import { Leasehold } from '../../src/leasehold.js';
import { setGeneratorRunning } from '../../src/processes/generator.js';
import { leaseholdMiddleware } from '../../src/service/express-adapter.js';
import { closeTestDatabase, withSchema } from '../support/database.js';
import { browserSuiteSkip, collectConsoleErrors, launchChromium } from '../support/chromium.js';

after(closeTestDatabase);

describe('dashboard mounted under a prefix, in a browser', { skip: browserSuiteSkip() }, () => {
  it('loads at /leasehold/ in an Express app, goes live, shows a new lease and stops the generator with a click', () =>
    withSchema('browser mounted dashboard', async (schema) => {
      const lh = Leasehold.fromEngine(await schema.engine());
      await setGeneratorRunning(lh, true, 'test');
      const leasehold = await leaseholdMiddleware({ leasehold: lh, auth: false });
      const app = express();
      app.get('/', (_req, res) => {
        res.send('the app’s own home');
      });
      app.use('/leasehold', leasehold);
      const server = createServer(app);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      let browser: Browser | undefined;
      try {
        browser = await launchChromium();
        const page = await browser.newPage();
        const consoleErrors = collectConsoleErrors(page);
        const requested: string[] = [];
        page.on('request', (r) => requested.push(new URL(r.url()).pathname));

        await page.goto(`${base}/leasehold`);
        assert.equal(new URL(page.url()).pathname, '/leasehold/');
        await page.getByTestId('connection').filter({ hasText: 'live' }).waitFor();

        const created = await fetch(`${base}/leasehold/api/leases`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ resource: 'mounted-visible', holder: 'tester', ttlSeconds: 30 }),
        });
        assert.equal(created.status, 201);
        await page.locator('tr[data-resource="mounted-visible"]').waitFor();

        await page.getByTestId('generator-state').filter({ hasText: 'started' }).waitFor();
        await page.getByRole('button', { name: 'Stop generator' }).click();
        await page.getByTestId('generator-state').filter({ hasText: 'stopped' }).waitFor();

        assert.ok(requested.includes('/leasehold/api/events'), 'the stream is under the mount');
        assert.ok(requested.includes('/leasehold/api/generator/stop'), 'the click too');
        assert.deepEqual(
          requested.filter((path) => !path.startsWith('/leasehold')),
          [],
          'nothing requested outside the mount',
        );
        assert.deepEqual(consoleErrors, [], 'no console errors');
      } finally {
        await browser?.close();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await leasehold.close();
      }
    }));
});

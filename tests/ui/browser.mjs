// Headless Chromium for the UI tests and benchmark: Debian's chromium driven by npm's
// playwright-core (tests/tools/npm), never a browser a tool downloads itself.
import path from 'node:path';
import {fileURLToPath} from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const {chromium} = await import(
    path.join(here, '../tools/npm/node_modules/playwright-core/index.mjs'));

export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--no-first-run'];

export async function launch() {
  return chromium.launch({executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
                          args: CHROMIUM_ARGS});
}

// A page that records console errors, page errors and failed requests into `problems`.
export async function newPage(browser, problems, viewport = {width: 1400, height: 900}) {
  const context = await browser.newContext({viewport, acceptDownloads: true});
  const page = await context.newPage();
  // HTTP errors are reported by URL (below), not by Chromium's "Failed to load resource".
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) {
      problems.push(`console: ${m.text()}`);
    }
  });
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`http ${r.status()}: ${r.url()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('requestfailed', (r) => {
    if (!/net::ERR_ABORTED/.test(r.failure()?.errorText || '')) {
      problems.push(`requestfailed: ${r.url()} ${r.failure()?.errorText}`);
    }
  });
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (u.hostname !== '127.0.0.1' && u.protocol !== 'data:') problems.push(`external: ${r.url()}`);
  });
  return page;
}

// Waits until every chart on the page has drawn (or `timeout` ms).
export async function chartsDrawn(page, n, timeout = 30000) {
  await page.waitForFunction((k) => {
    const c = window.__ferry?.charts || [];
    return c.length >= k && c.every((x) => x.loads > 0);
  }, n, {timeout});
}

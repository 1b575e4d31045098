// The browser half of bench/ui_bench.py: loads the compare view and the runs table in headless
// Chromium, each in a fresh context (cold cache), `repeats` times:
//   node bench/ui_bench.mjs URL COMPARE_HASH TABLE_HASH REPEATS [GRID_HASH]
// Prints JSON: per load, the time from navigation start to the first drawn chart (or to the
// interactive table), and the server's share from Resource Timing (request sent -> first byte).
import {launch} from '../tests/ui/browser.mjs';

const [url, compareHash, tableHash, repeats, gridHash] = process.argv.slice(2);
const browser = await launch();
const out = {compare: [], table: [], table_sorted: [], grid: []};
const sortedHash = `${tableHash}?order=${encodeURIComponent('metrics.loss ASC')}`;

function serverTimes(entries, pattern) {
  return entries.filter((e) => e.name.includes(pattern))
                .map((e) => ({ttfb: e.responseStart - e.requestStart,
                              total: e.responseEnd - e.startTime, bytes: e.encodedBodySize}));
}

for (let i = 0; i < Number(repeats); i++) {
  for (const [kind, hash] of [['compare', compareHash], ['table', tableHash],
                              ['table_sorted', sortedHash], ['grid', gridHash]]) {
    if (!hash) continue;
    const context = await browser.newContext({viewport: {width: 1400, height: 900}});
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${url}/${hash}`);
    if (kind === 'compare') {
      await page.waitForFunction(() => window.__ferry?.draws?.length > 0, null, {timeout: 120000});
    } else if (kind === 'grid') {
      await page.waitForFunction(() => window.__ferry?.charts?.length > 0 &&
          window.__ferry.draws.length === window.__ferry.charts.length, null, {timeout: 120000});
    } else {
      await page.waitForFunction(() => window.__ferry?.table, null, {timeout: 120000});
    }
    const r = await page.evaluate(([kind]) => {
      const f = window.__ferry;
      const entries = performance.getEntriesByType('resource').map((e) => e.toJSON());
      if (kind === 'grid') {
        return {ms: Math.max(...f.draws.map((d) => d.at)), charts: f.charts.length,
                runs: f.charts[0].runs.length, entries};
      }
      if (kind === 'compare') {
        const c = f.charts[0];
        return {ms: f.draws[0].at, runs: c.runs.length, ...c.lastRequest, entries};
      }
      return {ms: f.table.readyAt, rows: f.table.rows, fetchMs: f.table.fetchMs, entries};
    }, [kind]);
    if (kind === 'compare') {
      // Zoom: select steps [400000, 410000] and time the refetch until the finer data is drawn.
      r.zoom = await page.evaluate(async () => {
        const c = window.__ferry.charts[0];
        const u = c.u;
        const loads = c.loads;
        const drawn = c.lastDrawAt;
        const t0 = performance.now();
        const left = u.valToPos(400000, 'x');
        u.setSelect({left, top: 0, width: u.valToPos(410000, 'x') - left, height: u.bbox.height});
        while (c.loads === loads || c.lastDrawAt === drawn) {
          await new Promise((res) => setTimeout(res, 5));
        }
        return {ms: c.lastDrawAt - t0, polled: performance.now() - t0, range: c.lastRequest.range,
                maxPointsPerRun: c.lastRequest.maxPointsPerRun};
      });
    }
    r.server = serverTimes(r.entries, kind === 'compare' || kind === 'grid'
        ? 'get-history-bulk-interval' : 'runs/search');
    delete r.entries;
    r.errors = errors;
    out[kind].push(r);
    await context.close();
  }
}
await browser.close();
console.log(JSON.stringify(out));

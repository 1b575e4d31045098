// The web UI in headless Chromium against a real `ferry serve` seeded by tests/cli/test_ui.py:
//   node tests/ui/ui_test.mjs CONFIG.json
// CONFIG: {url, out (screenshot dir), demo: {experiment_id, runs: [ids], spike: {run, step,
// value}, weights_sha256, running}, table: {experiment_id, runs}}. Prints one JSON object
// (the checks' results and `problems`: console errors, page errors, failed or external
// requests); the pytest file asserts on it.
import crypto from 'node:crypto';
import fs from 'node:fs';
import {chartsDrawn, launch, newPage} from './browser.mjs';
import {a11yAudit, checkSpike, pointColoured} from './checks.mjs';

const cfg = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const out = {problems: []};
const browser = await launch();
const page = await newPage(browser, out.problems);
const shot = (name) => page.screenshot({path: `${cfg.out}/${name}.png`, fullPage: false});
const rows = () => page.$$eval('#runs tbody tr', (trs) => trs.map((tr) => tr.dataset.run));

try {
  // Experiments.
  await page.goto(`${cfg.url}/`);
  await page.waitForSelector('#experiments');
  out.experiments = await page.$$eval('#experiments tbody a', (as) => as.map((a) => a.textContent));
  out.a11y_experiments = await a11yAudit(page);
  // Keyboard: the first Tab reaches the skip link, Enter moves focus to the content.
  await page.keyboard.press('Tab');
  const firstTab = await page.evaluate(() => document.activeElement.textContent);
  await page.keyboard.press('Enter');
  out.keyboard = {first_tab: firstTab,
                  main_focused: await page.evaluate(() => document.activeElement.id === 'main')};
  await shot('ui-experiments');

  // Runs table of the demo experiment: sort, filter, columns.
  await page.click(`#experiments a[href="#/experiments/${cfg.demo.experiment_id}"]`);
  await page.waitForSelector('#runs tbody tr');
  out.demo_rows = (await rows()).length;
  await page.click('#runs thead button:text("metrics.loss")');
  await page.waitForFunction(() => location.hash.includes('order='));
  await page.waitForSelector('#runs th[aria-sort="ascending"]');
  const lossCol = await page.$$eval('#runs thead th', (ths) =>
      ths.findIndex((th) => th.textContent.startsWith('metrics.loss')));
  out.sorted_losses = await page.$$eval(`#runs tbody tr td:nth-child(${lossCol + 1})`,
                                        (tds) => tds.map((td) => Number(td.textContent)));
  await page.fill('#filter', "params.optim = 'adam'");
  await page.press('#filter', 'Enter');
  await page.waitForFunction(() => document.querySelectorAll('#runs tbody tr').length === 3);
  out.filtered_rows = (await rows()).length;
  await page.fill('#filter', 'metrics.loss <');
  await page.press('#filter', 'Enter');
  await page.waitForSelector('#runs-error [role=alert]');
  out.bad_filter_message = await page.textContent('#runs-error');
  await page.fill('#filter', '');
  await page.press('#filter', 'Enter');
  await page.waitForFunction(() => document.querySelectorAll('#runs tbody tr').length === 5);
  await page.click('details.columns summary');
  await page.check('.columns-list input[value="tags:ferry.host"]');
  out.host_column = await page.$$eval('#runs thead th', (ths) =>
      ths.some((th) => th.textContent.startsWith('tags.ferry.host')));
  await page.click('details.columns summary');
  // Keyboard: ArrowDown moves from the first row's link to the second's.
  await page.focus('#runs tbody tr:nth-child(1) td:nth-child(2) a');
  await page.keyboard.press('ArrowDown');
  out.arrow_focus = await page.evaluate(() => document.activeElement.closest('tr')?.rowIndex);
  out.a11y_runs = await a11yAudit(page);
  await page.check('#runs thead input[type=checkbox]');
  await shot('ui-runs');

  // Compare the 5 runs: bands, spike, request sizes, zoom, options.
  await page.click('#compare');
  await page.waitForSelector('#compare-charts figure.chart');
  await chartsDrawn(page, 2);
  out.compare = await page.evaluate(() => window.__ferry.charts.map((c) => ({
    key: c.key, series: c.u ? c.u.series.length - 1 : 0, ...c.lastRequest,
    plotArea: c.u ? c.u.bbox.width / devicePixelRatio : 0})));
  out.spike = await checkSpike(page, 'loss', cfg.demo.spike);
  // Default charts: loss and accuracy before data/* (system/* not charted by default).
  out.compare_keys = await page.$$eval('#compare-charts figure.chart', (fs) => fs.map((f) => f.dataset.key));
  // The legend: one entry per run, its swatch the colour of the run's line.
  out.legend = await page.evaluate(() => {
    const c = window.__ferry.charts.find((x) => x.key === 'loss');
    const css = (color) => Object.assign(document.createElement('span').style, {background: color}).background;
    const items = [...document.querySelectorAll('#legend li')];
    return {n: items.length, match: c.runs.every((r, i) => items[i]?.textContent.startsWith(r.name) &&
        items[i].querySelector('.swatch').style.background === css(r.color))};
  });
  // Hover: every run in view, each at a step it really logged (no column centre like 891.45).
  out.hover = await page.evaluate(() => {
    const c = window.__ferry.charts.find((x) => x.key === 'loss');
    c.u.setCursor({left: c.u.valToPos(891.4514, 'x'), top: 40});
    const real = c.hovered.every((hv) => c.series.find((s) => s.id === hv.run).points.some(
        (p) => p.step === hv.step && p.value === hv.value && Number.isInteger(p.step)));
    return {runs: c.hovered.length, real, text: c.readout.textContent};
  });
  // Params diff: the runs' params side by side, the differing ones marked; a toggle hides the rest.
  out.params_diff = await page.$$eval('#params-diff tbody tr', (trs) => trs.map(
      (tr) => [tr.dataset.key, tr.classList.contains('differs'), tr.children.length]));
  await page.check('#params-only-diff');
  out.params_only = await page.$$eval('#params-diff tbody tr', (trs) => trs.map((tr) => tr.dataset.key));
  await page.uncheck('#params-only-diff');
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot('ui-compare');
  // Pinning acc puts its chart first (in the URL too), and on the run page below.
  await page.click('#compare-charts figure[data-key="acc"] button.pin');
  out.pinned_order = await page.$$eval('#compare-charts figure.chart', (fs) => fs.map((f) => f.dataset.key));
  out.pinned_url = await page.evaluate(() => decodeURIComponent(location.hash.split('keys=')[1]));
  // Zoom: select steps ~[1000, 1500] of the loss chart; the chart fetches that range again.
  out.zoom = await page.evaluate(async () => {
    const c = window.__ferry.charts.find((x) => x.key === 'loss');
    const u = c.u;
    const left = u.valToPos(1000, 'x');
    u.setSelect({left, top: 0, width: u.valToPos(1500, 'x') - left, height: u.bbox.height});
    for (let i = 0; i < 100 && !c.lastRequest.range; i++) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 200));
    return {range: c.lastRequest.range, x0: u.data[0][0], x1: u.data[0][u.data[0].length - 1],
            points: c.lastRequest.points};
  });
  out.spike_zoomed = await checkSpike(page, 'loss', cfg.demo.spike);
  // The keyboard's zoom: "Zoom in" halves the range shown (and fetches it again).
  await page.focus('#compare-charts figure[data-key="loss"] button[aria-label="Zoom in on loss"]');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => {
    const r = window.__ferry.charts.find((x) => x.key === 'loss').lastRequest.range;
    return r && r[0] > 1000;
  });
  out.zoom_keyboard = await page.evaluate(
      () => window.__ferry.charts.find((x) => x.key === 'loss').lastRequest.range);
  await page.dblclick('#compare-charts figure[data-key="loss"] .u-over');
  await page.waitForFunction(() => {
    const c = window.__ferry.charts.find((x) => x.key === 'loss');
    return !c.range && !c.lastRequest.range;
  });
  await page.fill('#opt-smoothing', '0.9');
  await page.check('#opt-log');
  await page.selectOption('#opt-xmode', 'relative');
  await page.waitForTimeout(300);
  await shot('ui-compare-log');
  out.options_redraw = await page.evaluate(() => window.__ferry.charts.map((c) => ({
    key: c.key, log: c.u?.scales.y.distr === 3, xmode: c.options.xmode})));
  out.spike_smoothed_log = await checkSpike(page, 'loss', cfg.demo.spike, 'relative');
  await page.uncheck('#opt-log');
  await page.fill('#opt-smoothing', '0');
  await page.selectOption('#opt-xmode', 'step');
  // A narrower window: one chart per row, wider charts, new requests sized to them.
  const before = await page.evaluate(() => window.__ferry.charts[0].lastRequest.pixels);
  await page.setViewportSize({width: 1000, height: 900});
  await page.waitForFunction((b) => window.__ferry.charts.every(
      (c) => c.lastRequest.pixels !== b && c.u.width <= document.body.clientWidth), before);
  out.resized = await page.evaluate(() => window.__ferry.charts.map((c) => ({
    pixels: c.lastRequest.pixels, maxResults: c.lastRequest.maxResults,
    maxPointsPerRun: c.lastRequest.maxPointsPerRun})));
  out.resized_from = before;
  await page.setViewportSize({width: 1400, height: 900});
  out.a11y_compare = await a11yAudit(page);

  // Run page of the spiked run: overview, sections, image, log, checkpoints, download.
  await page.goto(`${cfg.url}/#/runs/${cfg.demo.spike.run}`);
  await page.waitForSelector('#overview');
  await page.waitForSelector('#artifacts');
  out.overview = await page.$$eval('#overview dd', (dds) =>
      Object.fromEntries(dds.map((d) => [d.dataset.field, d.textContent])));
  out.sections = await page.$$eval('.chart-section', (s) => s.map((x) => x.dataset.section));
  for (const f of await page.$$('figure.chart')) await f.scrollIntoViewIfNeeded();
  await chartsDrawn(page, 6);
  out.run_charts = await page.evaluate(() => window.__ferry.charts.map((c) => c.key).sort());
  // A server without tokens lets everyone write: the edit controls are there.
  await page.waitForSelector('#edit-name');
  out.edit_controls = await page.$$eval('#edit-name, #edit-note, #edit-tag-key, #delete-run',
                                        (e) => e.length);
  out.run_metrics_order = await page.$$eval('[data-section="Metrics"] figure.chart',
                                            (fs) => fs.map((f) => f.dataset.key));
  await page.click('[data-section="Metrics"] figure[data-key="acc"] button.pin');  // unpinned
  out.run_metrics_unpinned = await page.$$eval('[data-section="Metrics"] figure.chart',
                                               (fs) => fs.map((f) => f.dataset.key));
  out.summary_tables = await page.$$eval('table caption', (cs) => cs.map((c) => c.textContent)
                                                                  .filter((t) => /summary|latest/i.test(t)));
  // System metrics count seconds: a time axis, its ticks read as clock times.
  out.system_axis = await page.evaluate(() => {
    const c = window.__ferry.charts.find((x) => x.key === 'system/cpu_utilization_percentage');
    return {xmode: c.xmode(), label: c.u.axes[0].label, ticks: c.u.axes[0]._values,
            loss_label: window.__ferry.charts.find((x) => x.key === 'loss').u.axes[0].label};
  });
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot('ui-run');
  await page.waitForFunction(() => document.querySelector('.logged-image')?.complete);
  out.image = await page.$eval('.logged-image', (i) => ({w: i.naturalWidth, alt: i.alt}));
  await page.fill('#img-step-0', '0');
  await page.waitForFunction(() => document.querySelector('.logged-image').alt.endsWith('step 0'));
  out.image_step0 = await page.$eval('.logged-image', (i) => i.src);
  await page.$eval('#images', (e) => e.scrollIntoView());
  await shot('ui-run-artifacts');
  out.log_tail = await page.$eval('pre.log', (p) => p.textContent.slice(-40));
  out.attempts = await page.$$eval('#attempts tbody tr', (trs) => trs.map(
      (tr) => [...tr.children].map((td) => td.textContent)));
  out.attempt_overview = await page.textContent('#overview dd[data-field="Attempt"]');
  out.checkpoints = await page.$$eval('table.checkpoints td', (tds) => tds.map((t) => t.textContent));
  // Manifest entries link to the bytes where a browser can fetch them (an http(s) destination).
  const [ckpt] = await Promise.all([page.waitForEvent('download'),
                                    page.click('table.checkpoints a[data-path="best/model.pt"]')]);
  out.checkpoint_download = {name: ckpt.suggestedFilename(),
                             size: fs.readFileSync(await ckpt.path()).length};
  await page.click('#artifacts summary:text("model/")');
  const link = await page.waitForSelector('#artifacts a[data-path$="weights.bin"]');
  out.weights_size_text = await page.$eval('#artifacts a[data-path$="weights.bin"] + .size',
                                           (s) => s.textContent).catch(() => null);
  const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
  const bytes = fs.readFileSync(await download.path());
  out.download = {name: download.suggestedFilename(), size: bytes.length,
                  sha256: crypto.createHash('sha256').update(bytes).digest('hex')};
  out.a11y_run = await a11yAudit(page);

  // A run logged by ferry.track (config, log_image under a nested key).
  await page.goto(`${cfg.url}/#/runs/${cfg.demo.tracked}`);
  await page.waitForFunction((id) => document.querySelector('#overview dd[data-field="Run ID"]')
      ?.textContent === id && document.querySelector('#images figure.image-key'), cfg.demo.tracked);
  await page.waitForFunction(() => document.querySelector('.logged-image')?.complete);
  for (const f of await page.$$('figure.chart')) await f.scrollIntoViewIfNeeded();
  await chartsDrawn(page, 2);
  out.tracked = {
    summary: await page.$$eval('#summary tbody th', (ths) => ths.map((t) => t.textContent)),
    // A loader metric logged once, at the run's current step: drawn as a point.
    single_point: await pointColoured(page, 'data/train/batches_per_second', 57),
    params: await page.$$eval('#params tbody th', (ths) => ths.map((t) => t.textContent)),
    image: await page.$eval('#images figure.image-key', (f) => ({
      key: f.dataset.key, w: f.querySelector('img').naturalWidth,
      steps: String(Number(f.querySelector('input[type=range]').max) + 1),
      alt: f.querySelector('img').alt})),
  };

  // Live updates: a point logged to the running run appears without a reload.
  await page.goto(`${cfg.url}/#/runs/${cfg.demo.running}`);
  await page.waitForFunction((id) => document.querySelector('#overview dd[data-field="Run ID"]')
      ?.textContent === id, cfg.demo.running);
  await chartsDrawn(page, 1);
  await page.evaluate(async (id) => {
    await fetch('/api/2.0/mlflow/runs/log-batch', {
      method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify(
        {run_id: id, metrics: [{key: 'loss', value: 0.5, timestamp: Date.now(), step: 9999}]})});
  }, cfg.demo.running);
  await page.waitForFunction(() => {
    const c = window.__ferry.charts.find((x) => x.key === 'loss');
    return c?.series[0]?.points.some((p) => p.step === 9999);
  }, null, {timeout: 20000});
  out.live = true;

  // The big table: first page, next page, sort by a metric.
  await page.goto(`${cfg.url}/#/experiments/${cfg.table.experiment_id}`);
  await page.waitForSelector('#runs tbody tr');
  out.table_first = await page.evaluate(() => window.__ferry.table);
  await page.click('#next-page');
  await page.waitForFunction(() => window.__ferry.table.page === 1);
  out.table_page2 = await page.textContent('#page-info');
  await page.click('#runs thead button:text("metrics.loss")');
  await page.waitForFunction(() => location.hash.includes('order=') && window.__ferry.table.page === 0);
  await page.waitForSelector('#runs th[aria-sort="ascending"]');
  out.table_sorted_first = await page.$eval('#runs tbody tr td:nth-child(2)', (td) => td.textContent);
} catch (e) {
  out.error = String(e.stack || e);
  await shot('failure').catch(() => {});
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));

// The Model Registry page and a run's datasets and logged models in headless Chromium
// (tests/cli/test_ui.py::test_registry_and_datasets_in_chromium):
//   node tests/ui/registry_test.mjs CONFIG.json
// CONFIG: {url, out, run_id, model, model_id}. Prints one JSON object.
import fs from 'node:fs';
import {launch, newPage} from './browser.mjs';
import {a11yAudit} from './checks.mjs';

const cfg = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const out = {problems: []};
const browser = await launch();
try {
  const page = await newPage(browser, out.problems);
  await page.goto(`${cfg.url}/`);
  await page.waitForSelector('#experiments');
  await page.click('nav a[href="#/models"]');
  await page.waitForSelector('#models tbody tr');
  out.models = await page.$$eval('#models tbody tr', (trs) => trs.map((tr) =>
      [...tr.querySelectorAll('td')].map((td) => td.textContent)));
  out.nav_current = await page.$eval('nav a[aria-current]', (a) => a.textContent);
  out.a11y_models = await a11yAudit(page);
  await page.screenshot({path: `${cfg.out}/ui-models.png`});
  await page.click(`#models a[href="#/models/${encodeURIComponent(cfg.model)}"]`);
  await page.waitForSelector('#versions tbody tr');
  out.heading = await page.textContent('h1');
  out.versions = await page.$$eval('#versions tbody tr', (trs) => trs.map((tr) =>
      [...tr.querySelectorAll('td')].map((td) => td.textContent)));
  out.a11y_model = await a11yAudit(page);
  await page.screenshot({path: `${cfg.out}/ui-model.png`});
  // The version's source run link leads to the run page, which lists its dataset and model.
  await page.click('#versions tbody tr[data-version="1"] a');
  await page.waitForSelector('#datasets');
  out.run_hash = await page.evaluate(() => location.hash);
  out.datasets = await page.$$eval('#datasets tbody tr', (trs) => trs.map((tr) => tr.textContent));
  out.model_outputs = await page.$$eval('#model-outputs tbody tr', (trs) =>
      trs.map((tr) => tr.textContent));
  out.a11y_run = await a11yAudit(page);
  // A model name that is not registered: the page says so, nothing else breaks.
  await page.goto(`${cfg.url}/#/models/no-such-model`);
  await page.waitForSelector('[role=alert], .error');
  out.missing = await page.textContent('main');
} catch (e) {
  out.error = String(e.stack || e);
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));

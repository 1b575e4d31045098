// The UI on a server with tokens (tests/cli/test_ui.py::test_sign_in_with_a_read_token):
// the page loads without a token and asks for one; a wrong token is refused; a read-only
// token shows the experiments and a run's artifact downloads byte-exact; the cookie is the
// server's (HttpOnly: no script sees it) and never writes, even after signing in with a
// read-write token; Sign out forgets it. Prints one JSON line.
import fs from 'node:fs';
import {launch, newPage} from './browser.mjs';

const cfg = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const out = {problems: []};
const browser = await launch();
try {
  const page = await newPage(browser, out.problems);
  await page.goto(cfg.url + '/');
  await page.waitForSelector('#signin-token');
  out.first_heading = await page.textContent('h1');
  await page.getByLabel('Access token').fill('not-a-token');
  await page.getByRole('button', {name: 'Sign in'}).click();
  await page.waitForSelector('[role=alert]');
  out.rejected = await page.textContent('[role=alert]');
  await page.getByLabel('Access token').fill(cfg.read_token);
  await page.keyboard.press('Enter');
  await page.waitForSelector('#experiments');
  out.experiments = await page.$$eval('#experiments tbody a', (as) => as.map((a) => a.textContent));
  out.cookie = (await page.context().cookies()).map((c) => ({name: c.name, sameSite: c.sameSite,
                                                             httpOnly: c.httpOnly}));
  out.cookie_value_is_token = (await page.context().cookies()).some((c) => c.value.includes(cfg.read_token));
  out.script_sees_cookie = await page.evaluate(() => document.cookie.includes('ferry_token'));
  await page.goto(`${cfg.url}/#/runs/${cfg.run_id}`);
  const link = page.locator(`a[data-path$="${cfg.artifact}"]`);
  await link.waitFor({timeout: 30000});
  const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
  out.download = fs.readFileSync(await download.path()).toString('hex');
  // Editing (issue 33, docs/semantics/ui.md "Editing"): signed in with a read-only token the
  // run page has no edit controls; that token cannot unlock them, nor write calling the API.
  await page.waitForSelector('#edit #unlock');
  out.ro_controls = await page.$$eval('#edit-name, #delete-run, #edit-note, #edit-tag-key',
                                      (e) => e.length);
  await page.fill('#edit-token', cfg.read_token);
  await page.click('#unlock button[type=submit]');
  await page.waitForSelector('#unlock [role=alert]');
  out.ro_unlock = await page.textContent('#unlock [role=alert]');
  out.ro_direct = await page.evaluate(async ({token, run}) => (await fetch(
      '/ajax-api/2.0/mlflow/runs/set-tag', {method: 'POST', credentials: 'omit',
        headers: {'Content-Type': 'application/json', Authorization: `Bearer ${token}`},
        body: JSON.stringify({run_id: run, key: 'x', value: 'y'})})).status,
      {token: cfg.read_token, run: cfg.run_id});
  // The write token unlocks: rename, note and tag, with markup in the values (shown as text).
  await page.fill('#edit-token', cfg.write_token);
  await page.click('#unlock button[type=submit]');
  await page.waitForSelector('#edit-name');
  const xss = '<img src=x onerror="window.__pwned=1">';
  await page.fill('#edit-name', `run ${xss}`);
  await page.click('#rename button[type=submit]');
  await page.waitForFunction(() => document.querySelector('h1')?.textContent.startsWith('run <img'));
  await page.waitForSelector('#edit-note');
  await page.fill('#edit-note', 'line 1\n<script>window.__pwned=2</script>');
  await page.click('#note-form button[type=submit]');
  await page.waitForSelector('#note');
  await page.waitForSelector('#edit-tag-key');
  await page.fill('#edit-tag-key', 'team');
  await page.fill('#edit-tag-value', xss);
  await page.click('#tag-form button[type=submit]');
  await page.waitForSelector('button[aria-label="Delete tag team"]');
  out.xss = await page.evaluate(() => ({
    pwned: window.__pwned || 0, imgs: document.querySelectorAll('main img').length,
    title: document.querySelector('h1').textContent, note: document.querySelector('#note').textContent,
    tag: [...document.querySelectorAll('#tags tr')].find((tr) => tr.textContent.startsWith('team'))
        ?.querySelector('td').textContent}));
  await page.click('button[aria-label="Delete tag team"]');
  await page.waitForFunction(() => !document.querySelector('button[aria-label="Delete tag team"]') &&
                             document.querySelector('#edit-name'));
  page.once('dialog', (d) => d.accept());
  await page.click('#delete-run');
  await page.waitForSelector('#restore-run');
  out.deleted_note = await page.textContent('main .msg');
  await page.click('#restore-run');
  await page.waitForSelector('#delete-run');
  // A write through the cookie: refused even after signing in with the read-write token.
  out.write_sign_in = await page.evaluate(async (token) => (await fetch('/api/ferry/signin', {
    method: 'POST', headers: {Authorization: `Bearer ${token}`}})).status, cfg.write_token);
  out.cookie_write = await page.evaluate(async () => {
    const r = await fetch('/ajax-api/2.0/mlflow/experiments/create', {
      method: 'POST', headers: {'Content-Type': 'application/json'},
      body: JSON.stringify({name: 'from-the-cookie'})});
    return {status: r.status, body: await r.json()};
  });
  // Sign out while the page still waits for its data (held here): the late answer must not
  // replace the sign-in form (it did, and a CI run waited 30 s for the form).
  let first = true;
  let release;
  const held = new Promise((resolve) => { release = resolve; });
  await page.route((url) => url.pathname.endsWith('/experiments/search'), async (r) => {
    if (!first) return r.continue();
    first = false;
    const answer = await r.fetch();  // sent now, with the cookie; delivered after Sign out
    await held;
    await r.fulfill({response: answer});
  });
  await page.goto(cfg.url + '/#/');
  await page.getByRole('button', {name: 'Sign out'}).click();
  await page.waitForSelector('#signin-token');
  const late = page.waitForResponse((r) => r.url().endsWith('experiments/search') && r.status() === 200);
  release();
  await late;
  await page.waitForTimeout(300);  // the stale page's rendering, had it a place to go
  out.signin_kept = await page.isVisible('#signin-token');
  out.after_sign_out = (await page.context().cookies()).filter((c) => c.name === 'ferry_token').length;
} catch (e) {
  out.error = String(e.stack || e);
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));

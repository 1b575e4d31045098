// A web page in the user's browser against ferry serve (tests/cli/test_ui.py::
// test_other_origins_and_uploaded_html_cannot_act_for_the_user_in_chromium; issue 28):
//  - stored XSS: the user, signed in to the UI with the read-write token, is sent to an uploaded
//    evil.html artifact (directly, and framed by a page of another origin). Before, it ran on the
//    UI's origin, read the token from the cookie, sent it away and created an experiment;
//  - CSRF: the user visits a page of another origin that POSTs a text/plain form and no-cors
//    fetches to the default server (no tokens).
// The Python side counts what reached the attacker's server and checks what was written.
// Prints one JSON line.
import fs from 'node:fs';
import {launch} from './browser.mjs';

const cfg = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const out = {problems: []};
const browser = await launch();
try {
  const context = await browser.newContext({acceptDownloads: true});
  const page = await context.newPage();
  // Signed in with the read-write token, as the victim of the report was.
  await page.goto(cfg.url + '/');
  await page.waitForSelector('#signin-token');
  await page.getByLabel('Access token').fill(cfg.write_token);
  await page.keyboard.press('Enter');
  await page.waitForSelector('#experiments');
  // 1. Straight to the artifact: a download, never a page of this origin.
  const [download] = await Promise.all([
    page.waitForEvent('download', {timeout: 15000}).catch(() => null),
    page.goto(cfg.url + cfg.artifact).catch((e) => { out.goto_error = String(e.message).split('\n')[0]; }),
  ]);
  out.downloaded = !!download;
  // 2. Framed by the attacker's page, and opened in a new window from it.
  const evil = await context.newPage();
  await evil.goto(cfg.evil_url + '/frame');
  await evil.waitForTimeout(1500);
  // 3. CSRF against the default server from the attacker's origin.
  const csrf = await context.newPage();
  await csrf.goto(cfg.evil_url + '/csrf');
  await csrf.waitForTimeout(2000);
  out.script_sees_cookie = await page.evaluate(() => document.cookie.includes('ferry_token'))
      .catch(() => null);
} catch (e) {
  out.error = String(e.stack || e);
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));

// Ferry's tracker UI: a hash-routed single-page app over the MLflow REST API.
//   #/                         experiments
//   #/experiments/{id}         runs table (?filter=&order=)
//   #/runs/{run_id}            run page
//   #/compare?exp=&runs=&keys= compare view
//   #/models                   the Model Registry
//   #/models/{name}            one registered model's versions
import {h, message, setChildren} from './dom.js';
import {compareView} from './views/compare.js';
import {experimentsView} from './views/experiments.js';
import {modelsView, modelView} from './views/models.js';
import {runView} from './views/run.js';
import {runsView} from './views/runs.js';
import {refreshSignIn, signedIn, signInView, signOut} from './views/signin.js';

const ROUTES = [
  [/^\/?$/, experimentsView, 'Experiments'],
  [/^\/experiments\/([^/]+)$/, runsView, 'Runs'],
  [/^\/runs\/([^/]+)$/, runView, 'Run'],
  [/^\/compare$/, compareView, 'Compare'],
  [/^\/models$/, modelsView, 'Models'],
  [/^\/models\/([^/]+)$/, modelView, 'Model'],
];

const main = document.getElementById('main');
let current = null;  // the route being shown: {leaving, stale}

function parseHash() {
  const raw = location.hash.replace(/^#/, '');
  const q = raw.indexOf('?');
  return {path: q < 0 ? raw : raw.slice(0, q),
          query: new URLSearchParams(q < 0 ? '' : raw.slice(q + 1))};
}

// Each route renders into a box of its own. A route that is left while it still waits for the
// server (Sign out, or a click, before the page loaded) keeps writing into its box, which is no
// longer on the page: its late answer cannot replace what the newer route shows.
async function route() {
  if (current) {
    current.stale = true;
    for (const f of current.leaving) f();
  }
  const me = {leaving: [], stale: false};
  current = me;
  const page = {onLeave: (f) => (me.stale ? f() : me.leaving.push(f))};
  const box = h('div', {class: 'page'});
  setChildren(main, box);
  const {path, query} = parseHash();
  for (const [re, view, title] of ROUTES) {
    const m = path.match(re);
    if (!m) continue;
    document.title = `${title} · Ferry`;
    for (const a of document.querySelectorAll('nav a')) {
      a.toggleAttribute('aria-current', a.getAttribute('href') === `#/${path.split('/')[1] || ''}`);
    }
    const params = m[1] ? {id: decodeURIComponent(m[1])} : {};
    setChildren(box, message('Loading…'));  // never the previous page's content meanwhile
    renderAccount();
    try {
      await view(box, params, query, page);
    } catch (e) {
      if (me.stale) return;
      if (e.status === 401) {  // a server with tokens: sign in, then show the page
        document.title = 'Sign in · Ferry';
        signInView(box, false, route);
        await refreshSignIn();
        if (!me.stale) renderAccount();
        return;
      }
      console.warn(e);
      setChildren(box, h('h1', {}, title), message(`Could not load this page: ${e.message}`, 'error'));
    }
    return;
  }
  setChildren(box, h('h1', {}, 'Not found'), message(`No page at #${path}.`, 'error'),
              h('a', {href: '#/'}, 'Experiments'));
}

// "Sign out" in the header while the server's sign-in cookie is set.
function renderAccount() {
  const nav = document.querySelector('header.top nav');
  nav.querySelector('.signout')?.remove();
  if (!signedIn()) return;
  nav.append(h('button', {type: 'button', class: 'signout linkish',
                          onclick: async () => { await signOut(); renderAccount(); route(); }},
               'Sign out'));
}

window.addEventListener('hashchange', () => {
  route();
  main.focus({preventScroll: true});
});
// The skip link (a listener here: the page's CSP allows no inline script).
document.querySelector('a.skip').addEventListener('click', (ev) => {
  ev.preventDefault();
  main.focus();
});
refreshSignIn().then(route);

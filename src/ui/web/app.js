// Ferry's tracker UI: a hash-routed single-page app over the MLflow REST API.
//   #/                         experiments
//   #/experiments/{id}         runs table (?filter=&order=)
//   #/runs/{run_id}            run page
//   #/compare?exp=&runs=&keys= compare view
import {h, message, setChildren} from './dom.js';
import {compareView} from './views/compare.js';
import {experimentsView} from './views/experiments.js';
import {runView} from './views/run.js';
import {runsView} from './views/runs.js';
import {signedIn, signInView, signOut} from './views/signin.js';

const ROUTES = [
  [/^\/?$/, experimentsView, 'Experiments'],
  [/^\/experiments\/([^/]+)$/, runsView, 'Runs'],
  [/^\/runs\/([^/]+)$/, runView, 'Run'],
  [/^\/compare$/, compareView, 'Compare'],
];

const main = document.getElementById('main');
let leaving = [];

function parseHash() {
  const raw = location.hash.replace(/^#/, '');
  const q = raw.indexOf('?');
  return {path: q < 0 ? raw : raw.slice(0, q),
          query: new URLSearchParams(q < 0 ? '' : raw.slice(q + 1))};
}

async function route() {
  for (const f of leaving) f();
  leaving = [];
  const {path, query} = parseHash();
  const page = {onLeave: (f) => leaving.push(f)};
  for (const [re, view, title] of ROUTES) {
    const m = path.match(re);
    if (!m) continue;
    document.title = `${title} · Ferry`;
    for (const a of document.querySelectorAll('nav a')) {
      a.toggleAttribute('aria-current', a.getAttribute('href') === `#/${path.split('/')[1] || ''}`);
    }
    const params = m[1] ? {id: decodeURIComponent(m[1])} : {};
    setChildren(main, message('Loading…'));  // never the previous page's content meanwhile
    renderAccount();
    try {
      await view(main, params, query, page);
    } catch (e) {
      if (e.status === 401) {  // a server with tokens: sign in, then show the page
        document.title = 'Sign in · Ferry';
        signInView(main, signedIn(), route);
        renderAccount();
        return;
      }
      console.warn(e);
      setChildren(main, h('h1', {}, title), message(`Could not load this page: ${e.message}`, 'error'));
    }
    return;
  }
  setChildren(main, h('h1', {}, 'Not found'), message(`No page at #${path}.`, 'error'),
              h('a', {href: '#/'}, 'Experiments'));
}

// "Sign out" in the header while a token cookie is stored.
function renderAccount() {
  const nav = document.querySelector('header.top nav');
  nav.querySelector('.signout')?.remove();
  if (!signedIn()) return;
  nav.append(h('button', {type: 'button', class: 'signout linkish',
                          onclick: () => { signOut(); renderAccount(); route(); }}, 'Sign out'));
}

window.addEventListener('hashchange', () => {
  route();
  main.focus({preventScroll: true});
});
route();

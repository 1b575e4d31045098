// Sign-in for a server that needs a token (ferry serve --token-file / --read-token-file). The
// page sends the token once, in Authorization, to POST /api/ferry/signin; the server answers
// with the cookie ferry_token (HttpOnly: no script, this one included, can read it;
// SameSite=Strict; its value is an HMAC of the token, never the token), which the browser then
// sends with every request, links and images included. The server grants that cookie reads only,
// whatever the token (docs/semantics/ui.md, "Tokens").
import {h, message, setChildren} from '../dom.js';

let state = {auth_required: false, signed_in: false};

// Asks the server whether this browser is signed in (the cookie is invisible to scripts).
export async function refreshSignIn() {
  try {
    const r = await fetch('/api/ferry/whoami', {cache: 'no-store'});
    if (r.ok) state = await r.json();
  } catch {
    // Offline or stopped: keep what was known.
  }
  return state;
}

export function signedIn() {
  return state.signed_in;
}

async function signIn(token) {
  const r = await fetch('/api/ferry/signin', {
    method: 'POST', headers: {Authorization: `Bearer ${token}`}, cache: 'no-store'});
  await refreshSignIn();
  return r.ok;
}

export async function signOut() {
  await fetch('/api/ferry/signout', {
    method: 'POST', headers: {'Content-Type': 'application/json'}, cache: 'no-store'});
  state = {...state, signed_in: false};
}

// Shows the sign-in form in `main`; `retry` re-renders the page once signed in.
export function signInView(main, rejected, retry) {
  const input = h('input', {type: 'password', id: 'signin-token', name: 'token',
                            autocomplete: 'current-password', required: true, size: 40});
  const form = h('form', {class: 'signin', onsubmit: async (ev) => {
    ev.preventDefault();
    const ok = await signIn(input.value.trim());
    if (ok) retry();
    else signInView(main, true, retry);
  }},
  h('label', {for: 'signin-token'}, 'Access token'), ' ', input, ' ',
  h('button', {type: 'submit'}, 'Sign in'),
  h('p', {class: 'help'}, 'A token of the server\'s --token-file or --read-token-file. ' +
    'The server keeps this browser signed in with a cookie that gives the UI read access only.'));
  setChildren(main, h('h1', {}, 'Sign in'),
              rejected ? message('The token was not accepted.', 'error') : null, form);
  input.focus();
}

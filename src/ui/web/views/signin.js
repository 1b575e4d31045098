// Sign-in for a server that needs a token (ferry serve --token-file / --read-token-file): the
// token is kept in the cookie ferry_token (this origin only, SameSite=Strict), which the
// browser sends with every request, links and images included. The server grants a cookie
// reads only, whatever the token (docs/semantics/ui.md, "Tokens").
import {h, message, setChildren} from '../dom.js';

const COOKIE = 'ferry_token';

export function signedIn() {
  return document.cookie.split(';').some((c) => c.trim().startsWith(`${COOKIE}=`));
}

function setCookie(value, maxAge) {
  const secure = location.protocol === 'https:' ? '; Secure' : '';
  document.cookie = `${COOKIE}=${encodeURIComponent(value)}; Path=/; SameSite=Strict` +
                    `; Max-Age=${maxAge}${secure}`;
}

export function signOut() {
  setCookie('', 0);
}

// Shows the sign-in form in `main`; `retry` re-renders the page once a token is stored.
export function signInView(main, rejected, retry) {
  const input = h('input', {type: 'password', id: 'signin-token', name: 'token',
                            autocomplete: 'current-password', required: true, size: 40});
  const form = h('form', {class: 'signin', onsubmit: (ev) => {
    ev.preventDefault();
    setCookie(input.value.trim(), 30 * 24 * 3600);
    retry();
  }},
  h('label', {for: 'signin-token'}, 'Access token'), ' ', input, ' ',
  h('button', {type: 'submit'}, 'Sign in'),
  h('p', {class: 'help'}, 'A token of the server\'s --token-file or --read-token-file. ' +
    'It is kept in a cookie of this site and gives the UI read access only.'));
  setChildren(main, h('h1', {}, 'Sign in'),
              rejected ? message('The token was not accepted.', 'error') : null, form);
  input.focus();
}

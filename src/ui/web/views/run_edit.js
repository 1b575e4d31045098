// The run page's "Edit run" section: the run's name, its note (tag mlflow.note.content, as the
// MLflow UI keeps it), its tags (set, delete), and Delete / Restore. Shown only to whom the
// server lets write: on a server without tokens everyone; on a server with tokens, whoever
// unlocks editing with a write token (GET /api/ferry/whoami with that token says "write"). The
// sign-in cookie only reads, and a read-only token gets no controls (the server refuses its
// writes anyway, 403). Every value is shown as text, never markup.
import {deleteRun, deleteTag, renameRun, restoreRun, setTag, setWriteToken,
        whoami} from '../api.js';
import {h, message, setChildren} from '../dom.js';

export const NOTE_TAG = 'mlflow.note.content';
let unlocked = false;  // a write token was accepted in this page's lifetime (api.js holds it)

// Re-renders the current page (the route) after an edit.
function reload() {
  window.dispatchEvent(new HashChangeEvent('hashchange'));
}

async function act(status, f) {
  status.replaceChildren(message('Saving…'));
  try {
    await f();
    reload();
  } catch (e) {
    status.replaceChildren(message(`Not saved: ${e.message}`, 'error'));
  }
}

function unlockForm(box, render) {
  const input = h('input', {type: 'password', id: 'edit-token', autocomplete: 'off',
                            size: 30});
  const status = h('div', {});
  return h('form', {class: 'toolbar', id: 'unlock', onsubmit: async (ev) => {
    ev.preventDefault();
    let me = null;
    try { me = await whoami(input.value.trim()); } catch { /* shown below */ }
    if (me?.access === 'write') {
      setWriteToken(input.value.trim());
      unlocked = true;
      render();
    } else {
      status.replaceChildren(message(me?.access === 'read'
          ? 'This token is read-only: it cannot edit runs.' : 'The token was not accepted.',
          'error'));
    }
    input.value = '';
  }}, h('label', {for: 'edit-token'}, 'Write token'), input,
  h('button', {type: 'submit'}, 'Unlock editing'), status);
}

function controls(run) {
  const info = run.info;
  const id = info.run_id;
  const tags = (run.data.tags || []).filter((t) => !t.key.startsWith('mlflow.'));
  const note = (run.data.tags || []).find((t) => t.key === NOTE_TAG)?.value || '';
  const status = h('div', {id: 'edit-status'});
  const name = h('input', {type: 'text', id: 'edit-name', value: info.run_name || '', size: 40});
  const noteBox = h('textarea', {id: 'edit-note', rows: 3, cols: 60}, note);
  const tagKey = h('input', {type: 'text', id: 'edit-tag-key', size: 20});
  const tagValue = h('input', {type: 'text', id: 'edit-tag-value', size: 30});
  const deleted = info.lifecycle_stage === 'deleted';
  return [
    h('form', {class: 'toolbar', id: 'rename', onsubmit: (ev) => {
      ev.preventDefault();
      act(status, () => renameRun(id, name.value.trim()));
    }}, h('label', {for: 'edit-name'}, 'Run name'), name, h('button', {type: 'submit'}, 'Rename')),
    h('form', {class: 'toolbar', id: 'note-form', onsubmit: (ev) => {
      ev.preventDefault();
      const v = noteBox.value;
      act(status, () => (v.trim() ? setTag(id, NOTE_TAG, v) : deleteTag(id, NOTE_TAG)));
    }}, h('label', {for: 'edit-note'}, 'Note'), noteBox, h('button', {type: 'submit'}, 'Save note')),
    h('form', {class: 'toolbar', id: 'tag-form', onsubmit: (ev) => {
      ev.preventDefault();
      if (!tagKey.value.trim()) return;
      act(status, () => setTag(id, tagKey.value.trim(), tagValue.value));
    }}, h('label', {for: 'edit-tag-key'}, 'Tag'), tagKey,
      h('label', {for: 'edit-tag-value'}, 'Value'), tagValue, h('button', {type: 'submit'}, 'Set tag')),
    tags.length ? h('ul', {class: 'tag-list', id: 'edit-tags'}, tags.map((t) => h('li', {},
        h('code', {}, t.key), ' = ', t.value, ' ',
        h('button', {type: 'button', class: 'small', 'aria-label': `Delete tag ${t.key}`,
                     onclick: () => act(status, () => deleteTag(id, t.key))}, 'Delete')))) : null,
    h('div', {class: 'toolbar'}, deleted
        ? h('button', {type: 'button', id: 'restore-run',
                       onclick: () => act(status, () => restoreRun(id))}, 'Restore run')
        : h('button', {type: 'button', id: 'delete-run', class: 'danger', onclick: () => {
          if (!confirm(`Delete run ${info.run_name || id}? Its artifacts on this server are ` +
                       'deleted and do not come back; the run can be restored.')) return;
          act(status, () => deleteRun(id));
        }}, 'Delete run')),
    status,
  ];
}

// The section, or null when this browser may not edit (a read-only sign-in) and cannot unlock.
export async function editSection(run) {
  let me;
  try { me = await whoami(); } catch { return null; }
  const box = h('section', {id: 'edit', 'aria-labelledby': 'edit-h'});
  const render = () => setChildren(box, h('h2', {id: 'edit-h'}, 'Edit run'),
      !me.auth_required || unlocked ? controls(run)
          : [h('p', {class: 'help'}, 'Signed in, this page only reads. Editing needs a write ' +
                                     'token; it is kept in this page only, until it reloads.'),
             unlockForm(box, render)]);
  render();
  return box;
}

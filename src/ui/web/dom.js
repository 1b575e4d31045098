// Small DOM and formatting helpers shared by the views (no framework: house style 30).

// h('a', {href: '#/', class: 'x', onclick: fn}, 'text', child...) -> an element. Attributes
// starting with "on" become listeners; null/undefined/false children are skipped.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'style' && typeof v === 'object') Object.assign(el.style, v);
    else if (k in el && typeof v !== 'string') el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// Replaces the children of `el`.
export function setChildren(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// A status line for errors and notes (role=alert for errors, so screen readers announce them).
export function message(text, kind = 'note') {
  return h('p', {class: `msg msg-${kind}`, role: kind === 'error' ? 'alert' : 'status'}, text);
}

export function fmtTime(ms) {
  if (!ms) return '';
  const d = new Date(Number(ms));
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ` +
         `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

export function fmtDuration(ms) {
  if (ms === null || ms === undefined || !isFinite(ms) || ms < 0) return '';
  let s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const d = Math.floor(s / 86400); s -= d * 86400;
  const hh = Math.floor(s / 3600); s -= hh * 3600;
  const mm = Math.floor(s / 60); s -= mm * 60;
  return (d ? `${d}d ` : '') + (d || hh ? `${hh}h ` : '') + `${mm}m ${s}s`;
}

export function fmtBytes(n) {
  if (n === null || n === undefined || n === '') return '';
  n = Number(n);
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return i === 0 ? `${n} B` : `${n.toFixed(n < 10 ? 2 : 1)} ${units[i]}`;
}

// Numbers as people read them in a table: up to 6 significant digits.
export function fmtNum(v) {
  if (v === null || v === undefined || v === '') return '';
  if (typeof v === 'string') return v;
  if (!isFinite(v)) return String(v);
  if (v !== 0 && (Math.abs(v) >= 1e6 || Math.abs(v) < 1e-4)) return v.toExponential(3);
  return String(Number(v.toPrecision(6)));
}

// The run's duration: end - start, or now - start while it runs.
export function runDuration(info) {
  const start = Number(info.start_time || 0);
  if (!start) return null;
  const end = info.end_time ? Number(info.end_time) : (info.status === 'RUNNING' ? Date.now() : 0);
  return end ? end - start : null;
}

// Arrow-key navigation in a table: Up/Down move focus to the same column's control in the
// previous/next row, so the table is usable without a mouse.
export function arrowNavigation(tbody) {
  tbody.addEventListener('keydown', (ev) => {
    if (ev.key !== 'ArrowDown' && ev.key !== 'ArrowUp') return;
    const cell = ev.target.closest('td, th');
    const row = cell && cell.parentElement;
    if (!row) return;
    const next = ev.key === 'ArrowDown' ? row.nextElementSibling : row.previousElementSibling;
    if (!next) return;
    const target = next.children[cell.cellIndex];
    const focusable = target && (target.querySelector('a, button, input') || target);
    if (focusable) {
      if (!focusable.matches('a, button, input')) focusable.tabIndex = -1;
      focusable.focus();
      ev.preventDefault();
    }
  });
}

// A stable colour per index: golden-angle hues, darkish for contrast on white.
export function colorFor(i) {
  return `hsl(${(i * 137.508) % 360}, 70%, 40%)`;
}

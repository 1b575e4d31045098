// Pinned metrics: the keys a user pinned (the star on a chart) come first on every page: the
// run page's charts, the compare view's default charts and the runs table's default columns.
// Kept in the browser (localStorage, one list for all experiments).
import {h} from './dom.js';
import {rankKeys} from './series.js';

const STORE = 'ferry.pinnedMetrics';

export function pinnedKeys() {
  try {
    const v = JSON.parse(localStorage.getItem(STORE) || '[]');
    return Array.isArray(v) ? v.filter((k) => typeof k === 'string') : [];
  } catch {
    return [];
  }
}

export function togglePin(key) {
  const pins = pinnedKeys();
  const next = pins.includes(key) ? pins.filter((k) => k !== key) : [...pins, key];
  localStorage.setItem(STORE, JSON.stringify(next));
  return next;
}

// `keys` pinned first, then what users look at first (series.js rankKeys).
export function ranked(keys) {
  return rankKeys(keys, pinnedKeys());
}

// The star button of a chart: aria-pressed says whether `key` is pinned; onChange(pins) after.
export function pinButton(key, onChange) {
  const b = h('button', {type: 'button', class: 'small pin', 'aria-label': `Pin ${key} first`,
                         title: 'Pin: show this metric first'});
  const show = () => {
    const on = pinnedKeys().includes(key);
    b.setAttribute('aria-pressed', String(on));
    b.textContent = on ? '★ Pinned' : '☆ Pin';
  };
  b.addEventListener('click', () => { onChange(togglePin(key)); show(); });
  show();
  return b;
}

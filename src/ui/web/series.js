// From downsampled metric points to what a chart draws (pure functions, no DOM).
//
// Design note. get-history-bulk-interval answers, per run, each bucket's first/last/min/max
// point (docs/semantics/mlflow.md), asked with max_results = the chart's width in pixels. We
// group those points into the chart's pixel columns: per run and column the minimum, the
// maximum and the mean of the points that fall in it. The line goes through the means, the
// band spans min..max, so a one-step spike among a million points still reaches its full height
// in its column's band (and pulls the line up) instead of being averaged away. When all runs
// together have no more distinct x values than there are columns, the exact x values are used
// instead (nothing is binned).

// The x value of a point: its step, seconds since the run started, or wall-clock seconds.
export function xOf(mode, point, runStartMs) {
  if (mode === 'relative') return (point.timestamp - runStartMs) / 1000;
  if (mode === 'wall') return point.timestamp / 1000;
  return point.step;
}

// series: [{id, points}] (points with x set). Returns {x: [...], runs: [{id, mean, min, max}]}
// with arrays aligned to x (null where a run has no point), over [x0, x1] in `ncols` columns.
export function toColumns(series, x0, x1, ncols, logScale) {
  const ok = (v) => Number.isFinite(v) && (!logScale || v > 0);
  const distinct = new Set();
  for (const s of series) {
    for (const p of s.points) {
      if (p.x >= x0 && p.x <= x1) distinct.add(p.x);
      if (distinct.size > ncols) break;
    }
    if (distinct.size > ncols) break;
  }
  let x;
  let colOf;
  if (distinct.size <= ncols) {
    x = [...distinct].sort((a, b) => a - b);
    const index = new Map(x.map((v, i) => [v, i]));
    colOf = (px) => index.get(px);
  } else {
    const width = (x1 - x0) / ncols || 1;
    x = Array.from({length: ncols}, (_, i) => x0 + (i + 0.5) * width);
    colOf = (px) => Math.min(ncols - 1, Math.max(0, Math.floor((px - x0) / width)));
  }
  const n = x.length;
  const runs = series.map((s) => {
    const sum = new Float64Array(n);
    const cnt = new Uint32Array(n);
    const min = new Array(n).fill(null);
    const max = new Array(n).fill(null);
    for (const p of s.points) {
      if (p.x < x0 || p.x > x1 || !ok(p.value)) continue;
      const c = colOf(p.x);
      if (c === undefined) continue;
      sum[c] += p.value;
      cnt[c]++;
      if (min[c] === null || p.value < min[c]) min[c] = p.value;
      if (max[c] === null || p.value > max[c]) max[c] = p.value;
    }
    const mean = Array.from(cnt, (k, i) => (k ? sum[i] / k : null));
    return {id: s.id, mean, min, max};
  });
  return {x, runs};
}

// Exponential moving average with TensorBoard's debiasing; nulls are skipped and kept.
export function smooth(values, weight) {
  if (!weight) return values;
  const out = new Array(values.length).fill(null);
  let acc = 0;
  let k = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v === null) continue;
    acc = acc * weight + (1 - weight) * v;
    k++;
    out[i] = acc / (1 - Math.pow(weight, k));
  }
  return out;
}

// The step range [lo, hi] covering the points whose x is within [x0, x1] (for zooming on a
// time axis); null when none.
export function stepRangeFor(series, x0, x1) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const s of series) {
    let prev = null;
    for (const p of s.points) {
      if (p.x >= x0 && p.x <= x1) {
        lo = Math.min(lo, prev ? prev.step : p.step);
        hi = Math.max(hi, p.step);
      } else if (p.x > x1 && hi >= lo) {
        hi = Math.max(hi, p.step);
        break;
      }
      prev = p;
    }
  }
  return lo <= hi ? [lo, hi] : null;
}

// Metric keys grouped into the run page's sections.
export function sectionOf(key) {
  if (key.startsWith('system/gpu')) return 'GPU';
  if (key.startsWith('system/')) return 'System';
  if (key.startsWith('data/')) return 'Data';
  return 'Metrics';
}

// Metrics a user looks at first, in this order (a key goes to the first pattern it matches);
// then every other key of the run's own, then data/* (the loader), system/* and system/gpu*.
const FIRST_LOOKS = [/loss/i, /acc/i, /(^|[/_.-])val|valid/i, /eval|test/i,
  /(^|[/_.-])lr($|[/_.-])|learning.?rate/i, /f1|precision|recall|auc|bleu|score|perplexity|ppl/i];

function tierOf(key) {
  if (key.startsWith('system/gpu')) return FIRST_LOOKS.length + 3;
  if (key.startsWith('system/')) return FIRST_LOOKS.length + 2;
  if (key.startsWith('data/')) return FIRST_LOOKS.length + 1;
  const i = FIRST_LOOKS.findIndex((re) => re.test(key));
  return i < 0 ? FIRST_LOOKS.length : i;
}

// `keys` in the order charts and default columns take them: the pinned keys first (in the
// order pinned), then by tierOf, then alphabetically.
export function rankKeys(keys, pinned = []) {
  const pin = new Map(pinned.map((k, i) => [k, i]));
  const rank = (k) => (pin.has(k) ? [0, pin.get(k)] : [1, tierOf(k)]);
  return [...keys].sort((a, b) => {
    const [ra, rb] = [rank(a), rank(b)];
    return ra[0] - rb[0] || ra[1] - rb[1] || a.localeCompare(b);
  });
}

// Keys whose steps count seconds (`ferry run --track`'s system metrics): charted on a time axis.
export function isTimeKey(key) {
  return key.startsWith('system/');
}

// Seconds as a clock reads them: 45s, 2:05, 1:02:05 (12.5s below 10 s).
export function fmtSeconds(s) {
  const neg = s < 0 ? '-' : '';
  s = Math.abs(s);
  if (s < 10 && s !== Math.round(s)) return `${neg}${s.toFixed(1)}s`;
  s = Math.round(s);
  if (s < 60) return `${neg}${s}s`;
  const p = (n) => String(n).padStart(2, '0');
  const hh = Math.floor(s / 3600);
  const mm = Math.floor((s % 3600) / 60);
  return hh ? `${neg}${hh}:${p(mm)}:${p(s % 60)}` : `${neg}${mm}:${p(s % 60)}`;
}

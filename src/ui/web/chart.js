// One metric chart over one or more runs: uPlot (from npm, embedded; a global) draws a line
// per run through the per-pixel-column means and, beneath it, a min/max band so spikes survive
// downsampling (series.js explains the columns). Data comes from get-history-bulk-interval with
// max_results = the plot's width in pixels; a drag selects an x range and fetches that range
// again at full resolution (zoom); double-click or "Reset zoom" goes back.
//
// For tests and benchmarks every chart registers itself in window.__ferry.charts and records
// its last request (lastRequest), the points per run it received, and when it first drew.

import {bulkInterval, MAX_BULK_RESULTS} from './api.js';
import {h} from './dom.js';
import {fmtSeconds, isTimeKey, smooth, stepRangeFor, toColumns, xOf} from './series.js';

export const registry = (window.__ferry ??= {charts: [], draws: []});

// Runs per bulk request: requests run in parallel on the server's worker pool.
const RUNS_PER_REQUEST = 25;
const AXIS_PX = 64;  // the y axis' width, left of the plot area
// A run with at most this many points in view gets a marker per point: a single point (a
// metric logged once, at the run's current step) has no line to draw.
const MARKED_POINTS = 30;

let resizeTimer = null;
window.addEventListener('resize', () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => registry.charts.forEach((c) => c.resize()), 200);
});

// options (shared by the charts of a page, read at each draw): {xmode: 'step'|'relative'|'wall',
// smoothing: 0..0.99, log: bool, bands: bool}. runs: [{id, name, color, start}].
export class MetricChart {
  // `ready`: a promise the first draw waits for (the runs' names and start times arriving while
  // the points are fetched). `extra`: elements for the caption (a pin button).
  constructor(key, runs, options, {height = 240, title, ready, extra} = {}) {
    this.key = key;
    this.ready = ready || Promise.resolve();
    this.runs = runs;
    this.options = options;
    this.height = height;
    this.range = null;  // [startStep, endStep] when zoomed
    this.series = [];   // [{id, points: [{step, timestamp, value, x}]}]
    this.u = null;
    this.firstDrawAt = null;
    this.loads = 0;  // finished loads (drawn, empty or failed)
    this.resetButton = h('button', {type: 'button', class: 'small', hidden: true,
                                    onclick: () => this.zoom(null)}, 'Reset zoom');
    // The keyboard's way to zoom: the middle half of what is shown.
    const zoomIn = h('button', {type: 'button', class: 'small', 'aria-label': `Zoom in on ${key}`,
                                onclick: () => this.zoomIn()}, 'Zoom in');
    this.readout = h('div', {class: 'readout', 'aria-live': 'off'});
    this.plot = h('div', {class: 'plot', role: 'img', 'aria-label': `Chart of ${key}`});
    this.status = h('div', {class: 'chart-status', role: 'status'});
    this.el = h('figure', {class: 'chart', 'data-key': key},
                h('figcaption', {}, h('span', {class: 'chart-title'}, title || key),
                  zoomIn, this.resetButton, extra),
                this.plot, this.readout, this.status);
    this.plot.addEventListener('dblclick', () => this.range && this.zoom(null));
    registry.charts.push(this);
  }

  // The x axis in use: system metrics count seconds in their steps, so they are charted on a
  // time axis (time since start) where the page asks for steps.
  xmode() {
    return this.options.xmode === 'step' && isTimeKey(this.key) ? 'relative' : this.options.xmode;
  }

  // The chart's width: its box's.
  width() {
    return Math.max(200, this.plot.clientWidth || 600);
  }

  // The plot area's width in CSS pixels (uPlot's, axes and padding excluded): the number of
  // pixel columns, and of points asked per series.
  pixels() {
    if (!this.u) this.ensurePlot([[], ...this.runs.map(() => [])]);  // laid out, empty
    return Math.max(50, Math.floor(this.u.bbox.width / devicePixelRatio));
  }

  // Fetches the current range (all of it, or the zoomed steps) and draws.
  async load() {
    const pixels = this.pixels();
    const maxResults = Math.min(MAX_BULK_RESULTS, pixels);
    const ids = this.runs.map((r) => r.id);
    const chunks = [];
    for (let i = 0; i < ids.length; i += RUNS_PER_REQUEST) {
      chunks.push(ids.slice(i, i + RUNS_PER_REQUEST));
    }
    const t0 = performance.now();
    const seq = (this.seq = (this.seq || 0) + 1);
    if (!this.series.length) this.status.textContent = 'Loading…';
    let answers;
    try {
      [answers] = await Promise.all([Promise.all(chunks.map((c) => bulkInterval(
          c, this.key, maxResults, this.range?.[0], this.range?.[1]))), this.ready]);
    } catch (e) {
      if (seq !== this.seq) return;
      this.status.textContent = `Could not load ${this.key}: ${e.message}`;
      this.status.setAttribute('role', 'alert');
      this.loads++;
      return;
    }
    if (seq !== this.seq) return;  // a newer load (zoom, refresh) was started meanwhile
    const byRun = new Map(ids.map((id) => [id, []]));
    for (const p of answers.flat()) byRun.get(p.run_id)?.push(p);
    this.series = this.runs.map((r) => ({id: r.id, points: byRun.get(r.id) || []}));
    const perRun = this.series.map((s) => s.points.length);
    this.lastRequest = {maxResults, pixels, runs: ids.length, range: this.range,
                        requests: chunks.length, fetchMs: performance.now() - t0,
                        maxPointsPerRun: Math.max(0, ...perRun),
                        points: perRun.reduce((a, b) => a + b, 0)};
    this.status.textContent = '';
    this.draw();
    this.loads++;
  }

  // Recomputes the columns from the fetched points (after an option change) and draws.
  draw() {
    const o = this.options;
    const start = new Map(this.runs.map((r) => [r.id, Number(r.start || 0)]));
    let x0 = Infinity;
    let x1 = -Infinity;
    for (const s of this.series) {
      const s0 = start.get(s.id);
      for (const p of s.points) {
        p.x = xOf(this.xmode(), p, s0);
        if (p.x < x0) x0 = p.x;
        if (p.x > x1) x1 = p.x;
      }
    }
    if (!(x0 <= x1)) {
      this.destroyPlot();
      this.cols = null;
      this.status.textContent = `No points for ${this.key}.`;
      return;
    }
    const cols = toColumns(this.series, x0, x1, this.pixels(), o.log);
    this.cols = cols;
    const lines = cols.runs.map((r) => smooth(r.mean, o.smoothing));
    this.marked = lines.map((line) => {
      const idx = [];
      for (let c = 0; c < line.length && idx.length <= MARKED_POINTS; c++) {
        if (line[c] !== null) idx.push(c);
      }
      return idx.length <= MARKED_POINTS ? idx : null;
    });
    this.yRange = this.extent(cols, lines);
    this.resetButton.hidden = !this.range;
    this.ensurePlot([cols.x, ...lines]);
  }

  // Sets the data, creating the uPlot first (again when the scales' kind changed).
  ensurePlot(data) {
    const o = this.options;
    const shape = `${o.log}|${this.xmode()}|${this.runs.length}`;
    if (this.u && this.shape === shape) {
      this.u.setData(data);
      return;
    }
    this.destroyPlot();
    this.shape = shape;
    this.yRange ??= [0, 1];
    this.u = new uPlot(this.config(), data, this.plot);
  }

  extent(cols, lines) {
    let lo = Infinity;
    let hi = -Infinity;
    const take = (arr) => {
      for (const v of arr) {
        if (v === null) continue;
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
    };
    lines.forEach(take);
    if (this.options.bands) cols.runs.forEach((r) => { take(r.min); take(r.max); });
    if (!(lo <= hi)) return this.options.log ? [0.1, 1] : [0, 1];
    return [lo, hi];
  }

  config() {
    const o = this.options;
    const xmode = this.xmode();
    const self = this;
    return {
      width: this.width(),
      height: this.height,
      legend: {show: false},
      // Fixed padding (top, right, bottom, left): uPlot's automatic one follows the tick labels,
      // and the plot area must keep the width the points were asked for.
      padding: [10, 24, 0, 0],
      cursor: {drag: {x: true, y: false, setScale: false}, points: {show: false},
               bind: {dblclick: () => null}},
      scales: {
        // One distinct x (a single point): a range around it, not an empty one.
        x: {time: xmode === 'wall',
            range: (u, lo, hi) => (lo === hi ? [lo - 1, hi + 1] : [lo, hi])},
        y: {distr: o.log ? 3 : 1,
            range: () => {
              const [lo, hi] = self.yRange;
              return o.log ? uPlot.rangeLog(lo, hi, 10, true)
                           : uPlot.rangeNum(lo, hi, 0.05, true);
            }},
      },
      axes: [
        {label: {step: 'step', relative: 'time since start', wall: 'time'}[xmode],
         stroke: '#333', grid: {stroke: '#e5e5e5'},
         values: xmode === 'relative' ? (u, splits) => splits.map(fmtSeconds) : undefined},
        {size: AXIS_PX, stroke: '#333', grid: {stroke: '#e5e5e5'}},
      ],
      series: [{}, ...this.runs.map((r) => ({
        label: r.name, stroke: r.color, width: 1.25, spanGaps: true,
        points: {show: false, size: 7, fill: r.color,
                 filter: (u, si) => self.marked?.[si - 1] ?? null}}))],
      hooks: {
        drawAxes: [(u) => o.bands && self.drawBands(u)],
        draw: [() => self.drawn()],
        setSelect: [(u) => self.selected(u)],
        setCursor: [(u) => self.hover(u)],
      },
    };
  }

  // Min/max band per run: a translucent polygon from the column maxima back along the minima.
  drawBands(u) {
    if (!this.cols) return;
    const ctx = u.ctx;
    const {left, top, width, height} = u.bbox;
    ctx.save();
    ctx.beginPath();
    ctx.rect(left, top, width, height);
    ctx.clip();
    const xs = this.cols.x.map((v) => u.valToPos(v, 'x', true));
    this.cols.runs.forEach((r, i) => {
      const idx = [];
      for (let c = 0; c < xs.length; c++) if (r.max[c] !== null) idx.push(c);
      if (!idx.length) return;
      const color = this.runs[i].color;
      ctx.beginPath();
      idx.forEach((c, k) => (k ? ctx.lineTo : ctx.moveTo).call(ctx, xs[c], u.valToPos(r.max[c], 'y', true)));
      for (let k = idx.length - 1; k >= 0; k--) ctx.lineTo(xs[idx[k]], u.valToPos(r.min[idx[k]], 'y', true));
      ctx.closePath();
      ctx.globalAlpha = 0.18;
      ctx.fillStyle = color;
      ctx.fill();
      ctx.globalAlpha = 0.55;
      ctx.strokeStyle = color;
      ctx.lineWidth = 1;
      ctx.stroke();
    });
    ctx.restore();
  }

  drawn() {
    if (!this.cols) return;  // the empty plot laid out before the first answer
    this.lastDrawAt = performance.now();
    if (this.firstDrawAt === null) {
      this.firstDrawAt = performance.now();
      registry.draws.push({key: this.key, at: this.firstDrawAt, runs: this.runs.length});
    }
  }

  selected(u) {
    if (u.select.width < 4) return;
    const a = u.posToVal(u.select.left, 'x');
    const b = u.posToVal(u.select.left + u.select.width, 'x');
    u.setSelect({left: 0, top: 0, width: 0, height: 0}, false);
    this.zoomToX(a, b);
  }

  zoomIn() {
    if (!this.u) return;
    const {min, max} = this.u.scales.x;
    const q = (max - min) / 4;
    this.zoomToX(min + q, max - q);
  }

  // Fetches the steps behind the x range [a, b] (steps, or times mapped back to steps).
  zoomToX(a, b) {
    let steps = [a, b];
    if (this.xmode() !== 'step') steps = stepRangeFor(this.series, a, b);
    if (!steps) return;
    const lo = Math.max(0, Math.floor(steps[0]));
    const hi = Math.max(lo, Math.ceil(steps[1]));
    this.zoom([lo, hi]);
  }

  // Lists every run with a point in view: its real point nearest the cursor's x (the step it
  // was logged at, never a column's centre) and that point's value.
  hover(u) {
    const left = u.cursor.left;
    if (left === null || left === undefined || left < 0 || !this.cols) {
      this.readout.replaceChildren();
      this.hovered = [];
      return;
    }
    const x = u.posToVal(left, 'x');
    const {min, max} = u.scales.x;
    const xmode = this.xmode();
    const rows = [];
    this.series.forEach((s, i) => {
      let best = null;
      for (const p of s.points) {
        if (p.x < min || p.x > max || !Number.isFinite(p.value)) continue;
        if (!best || Math.abs(p.x - x) < Math.abs(best.x - x)) best = p;
      }
      if (best) rows.push({run: this.runs[i], p: best});
    });
    rows.sort((a, b) => b.p.value - a.p.value);
    this.hovered = rows.map((r) => ({run: r.run.id, step: r.p.step, value: r.p.value}));
    const where = (p) => (xmode === 'step' ? `step ${p.step}`
        : xmode === 'wall' ? `${new Date(p.timestamp).toLocaleString()} (step ${p.step})`
        : `${fmtSeconds(p.x)} (step ${p.step})`);
    const steps = new Set(rows.map((r) => r.p.step));
    const common = xmode === 'step' && steps.size === 1;
    this.readout.replaceChildren(
        ...(common ? [h('span', {class: 'ro-x'}, `step ${rows[0].p.step}`)] : []),
        ...rows.map((r) => h('span', {class: 'ro-run'},
            h('span', {class: 'swatch', style: {background: r.run.color}, 'aria-hidden': 'true'}),
            `${r.run.name} ${Number(r.p.value.toPrecision(5))}`, common ? '' : ` at ${where(r.p)}`)));
  }

  // After the page's width changed: a new size, and data for the new number of pixels.
  resize() {
    if (!this.u || !this.lastRequest || Math.abs(this.width() - this.u.width) < 20) return;
    this.u.setSize({width: this.width(), height: this.height});
    this.load();
  }

  async zoom(range) {
    this.range = range;
    await this.load();
  }

  destroyPlot() {
    if (this.u) this.u.destroy();
    this.u = null;
  }

  destroy() {
    this.destroyPlot();
    const i = registry.charts.indexOf(this);
    if (i >= 0) registry.charts.splice(i, 1);
  }
}

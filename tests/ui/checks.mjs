// In-page checks shared by the UI test: a spike's visibility in a chart, and a small
// accessibility audit (labelled controls, text contrast).

// Where the planted spike is in chart `key`: whether the downsampled answer kept it, the
// maximum of its pixel column for that run, the y axis' top, and whether the canvas has the
// run's colour at the spike's pixel (a band or line drawn there).
export function checkSpike(page, key, spike) {
  return page.evaluate(({key, spike}) => {
    const c = window.__ferry.charts.find((x) => x.key === key);
    if (!c || !c.u) return {error: 'no chart'};
    const i = c.runs.findIndex((r) => r.id === spike.run);
    const pts = c.series[i].points;
    const p = pts.find((q) => q.step === spike.step);
    if (!p) return {in_answer: false, points: pts.length};
    const xs = c.cols.x;
    let col = 0;
    for (let k = 1; k < xs.length; k++) if (Math.abs(xs[k] - p.x) < Math.abs(xs[col] - p.x)) col = k;
    const u = c.u;
    const cx = Math.round(u.valToPos(xs[col], 'x', true));
    const cy = Math.round(u.valToPos(spike.value, 'y', true));
    const y0 = Math.max(Math.round(u.bbox.top), cy - 3);
    const img = u.ctx.getImageData(cx - 3, y0, 7, 7).data;
    let coloured = 0;
    for (let k = 0; k < img.length; k += 4) {
      const [r, g, b] = [img[k], img[k + 1], img[k + 2]];
      if (Math.max(r, g, b) - Math.min(r, g, b) > 40) coloured++;
    }
    return {in_answer: p.value === spike.value, column_max: c.cols.runs[i].max[col],
            line: u.data[i + 1][col], y_max: u.scales.y.max, coloured_pixels: coloured,
            columns: xs.length, pixels: c.lastRequest.pixels};
  }, {key, spike});
}

// Controls without an accessible name, and text below 4.5:1 contrast (3:1 for large text).
export function a11yAudit(page) {
  return page.evaluate(() => {
    const named = (el) => {
      if (el.getAttribute('aria-label') || el.getAttribute('aria-labelledby')) return true;
      if (el.labels && el.labels.length) return true;
      if (el.tagName === 'BUTTON' || el.tagName === 'A' || el.tagName === 'SUMMARY') {
        return el.textContent.trim().length > 0;
      }
      return false;
    };
    const unlabeled = [...document.querySelectorAll('input, select, textarea, button, a[href], summary')]
        .filter((el) => el.offsetParent !== null && !named(el))
        .map((el) => el.outerHTML.slice(0, 120));
    const rgb = (s) => (s.match(/[\d.]+/g) || []).map(Number);
    const lum = ([r, g, b]) => {
      const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
      return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    const bgOf = (el) => {
      for (let e = el; e; e = e.parentElement) {
        const c = rgb(getComputedStyle(e).backgroundColor);
        if (c.length === 3 || (c.length === 4 && c[3] > 0.5)) return c.slice(0, 3);
      }
      return [255, 255, 255];
    };
    const low = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const seen = new Set();
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      if (!n.textContent.trim() || seen.has(el) || el.offsetParent === null) continue;
      seen.add(el);
      const st = getComputedStyle(el);
      const fg = rgb(st.color).slice(0, 3);
      const [l1, l2] = [lum(fg), lum(bgOf(el))].sort((a, b) => b - a);
      const ratio = (l1 + 0.05) / (l2 + 0.05);
      const size = parseFloat(st.fontSize);
      const large = size >= 24 || (size >= 18.66 && Number(st.fontWeight) >= 700);
      if (ratio < (large ? 3 : 4.5)) {
        low.push(`${el.tagName}.${el.className}: ${ratio.toFixed(2)} ` +
                 `"${n.textContent.trim().slice(0, 30)}"`);
      }
    }
    return {unlabeled: unlabeled.slice(0, 10), low_contrast: low.slice(0, 10),
            controls: document.querySelectorAll('input, select, button').length};
  });
}

// Chart `key`'s first run at its first column: how many pixels of the 7x7 square around the
// point (x = the column's x, y = `value`) are coloured (a line, band or point marker).
export function pointColoured(page, key, value) {
  return page.evaluate(({key, value}) => {
    const c = window.__ferry.charts.find((x) => x.key === key);
    if (!c || !c.u || !c.cols) return {error: 'no chart'};
    const u = c.u;
    const cx = Math.round(u.valToPos(c.cols.x[0], 'x', true));
    const cy = Math.round(u.valToPos(value, 'y', true));
    const img = u.ctx.getImageData(cx - 3, cy - 3, 7, 7).data;
    let coloured = 0;
    for (let k = 0; k < img.length; k += 4) {
      const [r, g, b] = [img[k], img[k + 1], img[k + 2]];
      if (Math.max(r, g, b) - Math.min(r, g, b) > 40) coloured++;
    }
    return {columns: c.cols.x.length, coloured, points: c.series[0].points.length};
  }, {key, value});
}

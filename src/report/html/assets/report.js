// wattwise report: draws every chart from the JSON blob in #wattwise-data with Chart.js.
// The C++ side computed every number; this script only maps them onto charts. When it is done it sets
// <body data-charts-drawn="N">, N = charts that have data; the end-to-end test compares it with
// data-charts-expected and reads data-js-errors (set by the error handler at the top of <body>).
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('wattwise-data').textContent);
  Chart.defaults.animation = false;  // draw at once: fast to open, and screenshots see the final picture
  Chart.defaults.font.size = 13;
  Chart.defaults.maintainAspectRatio = false;
  Chart.defaults.plugins.legend.labels.usePointStyle = true;

  // Okabe-Ito: categorical colours that stay distinct for colour-blind readers.
  const CATEGORICAL = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000', '#F0E442'];
  // Viridis, sampled: settings are ordered by their knob values, so a sequential scale reads as "more/less".
  const VIRIDIS = ['#440154', '#482878', '#3e4989', '#31688e', '#26828e', '#1f9e89', '#35b779', '#6ece58',
                   '#b5de2b', '#fde725'];
  const categorical = (i) => CATEGORICAL[i % CATEGORICAL.length];
  function sequential(i, n) {
    return sequentialAt(n <= 1 ? 0 : i / (n - 1));
  }
  function sequentialAt(fraction) {
    const x = Math.min(1, Math.max(0, fraction)) * 0.92;  // stop short of the pale yellow end
    const k = Math.min(VIRIDIS.length - 2, Math.floor(x * (VIRIDIS.length - 1)));
    const f = x * (VIRIDIS.length - 1) - k;
    const rgb = (h) => [1, 3, 5].map((o) => parseInt(h.substr(o, 2), 16));
    const a = rgb(VIRIDIS[k]), b = rgb(VIRIDIS[k + 1]);
    return 'rgb(' + a.map((v, j) => Math.round(v + f * (b[j] - v))).join(',') + ')';
  }
  const withAlpha = (color, alpha) =>
    color.startsWith('rgb(') ? color.replace('rgb(', 'rgba(').replace(')', ',' + alpha + ')')
                             : color + Math.round(alpha * 255).toString(16).padStart(2, '0');

  const UNITS = [['_w', 'W'], ['_mhz', 'MHz'], ['_s', 's'], ['_j', 'J'], ['_pct', '%']];
  function knobLabel(knob) {
    for (const [suffix, unit] of UNITS)
      if (knob.endsWith(suffix)) return knob.slice(0, -suffix.length).replace(/_/g, ' ') + ' (' + unit + ')';
    return knob.replace(/_/g, ' ');
  }
  function knobUnit(knob) {
    for (const [suffix, unit] of UNITS) if (knob.endsWith(suffix)) return ' ' + unit;
    return '';
  }
  const QUANTITY_NAMES = {P: 'avg power', E: 'energy', t: 'time', EDP: 'EDP'};
  const quantityName = (q) => QUANTITY_NAMES[q] || q;
  const settings = data.settings;
  const ref = settings[data.reference_index];
  const shortLabel = (s) => Object.values(s.values).map(String).join(', ') || s.label;
  const unitLabel = (s) => Object.entries(s.values)
      .map(([knob, v]) => (knobUnit(knob) ? v + knobUnit(knob) : knob.replace(/_/g, ' ') + ' ' + v))
      .join(', ') || s.label;

  // Error bars: Chart.js 3 has none built in; a dataset with `errorBars` (per point {x, y} half-widths)
  // gets them drawn here after its points.
  Chart.register({
    id: 'wattwiseErrorBars',
    afterDatasetsDraw(chart) {
      const ctx = chart.ctx;
      chart.data.datasets.forEach((ds, i) => {
        if (!ds.errorBars || !chart.isDatasetVisible(i)) return;
        const meta = chart.getDatasetMeta(i);
        const xs = chart.scales[meta.xAxisID], ys = chart.scales[meta.yAxisID];
        ctx.save();
        const area = chart.chartArea;  // a bar longer than the axis range is cut at the plot's edge
        ctx.beginPath();
        ctx.rect(area.left, area.top, area.right - area.left, area.bottom - area.top);
        ctx.clip();
        ctx.strokeStyle = ds.borderColor;
        ctx.lineWidth = 1.2;
        ds.data.forEach((p, j) => {
          const e = ds.errorBars[j];
          if (!e || p == null) return;
          const px = xs.getPixelForValue(p.x), py = ys.getPixelForValue(p.y);
          const line = (x0, y0, x1, y1) => { ctx.beginPath(); ctx.moveTo(x0, y0); ctx.lineTo(x1, y1); ctx.stroke(); };
          if (e.y != null && e.y > 0) {
            const lo = ys.getPixelForValue(p.y - e.y), hi = ys.getPixelForValue(p.y + e.y);
            line(px, lo, px, hi); line(px - 3, lo, px + 3, lo); line(px - 3, hi, px + 3, hi);
          }
          if (e.x != null && e.x > 0) {
            const lo = xs.getPixelForValue(p.x - e.x), hi = xs.getPixelForValue(p.x + e.x);
            line(lo, py, hi, py); line(lo, py - 3, lo, py + 3); line(hi, py - 3, hi, py + 3);
          }
        });
        ctx.restore();
      });
    },
  });

  // Phase shading (the single-run power chart): options.plugins.wattwisePhases.spans = [{name, begin_s,
  // end_s}], one colour per name, the name written at the top of its band (one row per name, so nested
  // phases do not write over each other) where the band is wide enough to hold it.
  const PHASE_COLOURS = ['#E69F00', '#56B4E9', '#CC79A7', '#009E73', '#F0E442', '#0072B2'];
  Chart.register({
    id: 'wattwisePhases',
    beforeDatasetsDraw(chart, args, opts) {
      if (!opts || !opts.spans || opts.spans.length === 0) return;
      const ctx = chart.ctx, area = chart.chartArea, xs = chart.scales.x;
      const names = [...new Set(opts.spans.map((s) => s.name))];
      ctx.save();
      ctx.font = '12px system-ui, sans-serif';
      ctx.textBaseline = 'top';
      opts.spans.forEach((s) => {
        const k = names.indexOf(s.name);
        const x0 = Math.max(area.left, xs.getPixelForValue(s.begin_s));
        const x1 = Math.min(area.right, xs.getPixelForValue(s.end_s));
        if (!(x1 > x0)) return;
        ctx.fillStyle = withAlpha(PHASE_COLOURS[k % PHASE_COLOURS.length], 0.16);
        ctx.fillRect(x0, area.top, x1 - x0, area.bottom - area.top);
        ctx.strokeStyle = withAlpha(PHASE_COLOURS[k % PHASE_COLOURS.length], 0.7);
        ctx.beginPath(); ctx.moveTo(x0, area.top); ctx.lineTo(x0, area.bottom); ctx.stroke();
        if (ctx.measureText(s.name).width + 6 < x1 - x0) {
          ctx.fillStyle = '#333';
          ctx.fillText(s.name, x0 + 3, area.top + 3 + 15 * k);
        }
      });
      ctx.restore();
    },
  });

  // Text beside points: a dataset with `pointLabels` (one string or null per point) gets them written.
  Chart.register({
    id: 'wattwisePointLabels',
    afterDatasetsDraw(chart) {
      const ctx = chart.ctx;
      chart.data.datasets.forEach((ds, i) => {
        if (!ds.pointLabels || !chart.isDatasetVisible(i)) return;
        const meta = chart.getDatasetMeta(i);
        ctx.save();
        ctx.font = '11px system-ui, sans-serif';
        ctx.fillStyle = '#222';
        ctx.textBaseline = 'bottom';
        meta.data.forEach((el, j) => { if (ds.pointLabels[j]) ctx.fillText(ds.pointLabels[j], el.x + 6, el.y - 4); });
        ctx.restore();
      });
    },
  });

  // A colour scale for points coloured by an ordered value: options.plugins.wattwiseColorBar = {min, max,
  // title, color(v)}, drawn in the right padding of the chart with its ends and middle labelled.
  Chart.register({
    id: 'wattwiseColorBar',
    afterDraw(chart, args, opts) {
      if (!opts || opts.min == null) return;
      const ctx = chart.ctx, area = chart.chartArea;
      const x = area.right + 22, w = 14, top = area.top + 10, bottom = area.bottom - 10;
      const grad = ctx.createLinearGradient(0, bottom, 0, top);
      for (let f = 0; f <= 1.0001; f += 0.1) grad.addColorStop(Math.min(1, f), opts.color(opts.min + f * (opts.max - opts.min)));
      ctx.save();
      ctx.fillStyle = grad;
      ctx.fillRect(x, top, w, bottom - top);
      ctx.strokeStyle = '#666';
      ctx.strokeRect(x, top, w, bottom - top);
      ctx.fillStyle = '#222';
      ctx.font = '11px system-ui, sans-serif';
      ctx.textBaseline = 'middle';
      [0, 0.5, 1].forEach((f) => {
        const v = opts.min + f * (opts.max - opts.min);
        ctx.fillText(String(Math.round(v * 10) / 10), x + w + 4, bottom - f * (bottom - top));
      });
      ctx.translate(x - 6, (top + bottom) / 2);
      ctx.rotate(-Math.PI / 2);
      ctx.textAlign = 'center';
      ctx.textBaseline = 'bottom';
      ctx.fillText(opts.title, 0, 0);
      ctx.restore();
    },
  });

  function options(title, xTitle, yTitle, extra) {
    const o = {
      parsing: false,
      normalized: true,
      plugins: {title: {display: true, text: title, font: {size: 16, weight: 'bold'}},
                legend: {position: 'right'}},
      scales: {x: {type: 'linear', title: {display: true, text: xTitle}},
               y: {type: 'linear', title: {display: true, text: yTitle}}},
    };
    return Object.assign(o, extra || {});
  }

  // Settings that differ from the reference only in `knob`, by increasing value.
  function slice(knob) {
    const others = (s) => JSON.stringify(Object.entries(s.values).filter(([k]) => k !== knob));
    return settings.map((s, i) => [s, i])
        .filter(([s]) => knob in s.values && others(s) === others(ref))
        .sort((a, b) => a[0].values[knob] - b[0].values[knob]);
  }

  const drawn = [];
  function draw(id, config) {
    const canvas = document.getElementById(id);
    if (!canvas) return;
    const chart = new Chart(canvas, config);
    const points = chart.data.datasets.reduce((n, ds) => n + ds.data.filter((p) => p != null).length, 0);
    if (points > 0) drawn.push(id);
  }

  function knobChart(knob) {
    const rows = slice(knob);
    const datasets = data.quantities.map((q, qi) => ({
      label: quantityName(q),
      data: rows.map(([s]) => ({x: s.values[knob], y: s.normalised[q].value})),
      errorBars: rows.map(([s]) => ({y: s.normalised[q].std})),
      borderColor: categorical(qi), backgroundColor: categorical(qi),
      showLine: true, pointRadius: 3, borderWidth: 2,
    }));
    datasets.push({label: 'reference', data: [{x: ref.values[knob], y: 1}], pointStyle: 'star', pointRadius: 10,
                   borderColor: '#000', backgroundColor: '#000', borderWidth: 2, clip: false});
    const o = options('Relative to the reference vs ' + knobLabel(knob), knobLabel(knob),
                      'value / reference value (reference = 1)');
    // The axis covers the error bars too, so a noisy point shows how noisy it is.
    const ends = rows.flatMap(([s]) => data.quantities.flatMap((q) => {
      const v = s.normalised[q];
      return v.std == null ? [v.value] : [v.value - v.std, v.value + v.std];
    }));
    o.scales.y.suggestedMin = Math.min(...ends);
    o.scales.y.suggestedMax = Math.max(...ends);
    draw('chart-knob-' + knob, {type: 'scatter', data: {datasets}, options: o});
  }

  // The distinct values a knob takes, ascending.
  const knobValues = (knob) =>
      [...new Set(settings.filter((s) => knob in s.values).map((s) => s.values[knob]))].sort((a, b) => a - b);
  // With two knobs or more, the one with more values is told by colour, the next by shape or dash.
  const styleKnobs = () => [...data.knobs].sort((a, b) => knobValues(b).length - knobValues(a).length);
  // The box's pick (within the slowdown limit, docs/report.md), else the headline metric's recommendation.
  const headline = data.lead ? data.lead.pick
                             : data.recommendations.length > 0 ? data.recommendations[data.headline] : null;
  const headlineLimit = data.lead && data.lead.max_slowdown_pct !== null
                            ? ', at most ' + data.lead.max_slowdown_pct + '% slower' : '';

  function planeChart() {
    const point = (s) => ({x: s.normalised.t.value, y: s.normalised.E.value});
    const xs = settings.map((s) => s.normalised.t.value), ys = settings.map((s) => s.normalised.E.value);
    // Axis ends on multiples of 0.05, so the ticks read 0.95, 1.00, ...
    const pad = (lo, hi) => {
      const m = Math.max(0.01, (hi - lo) * 0.05);
      return [Math.floor((lo - m) * 20) / 20, Math.ceil((hi + m) * 20) / 20];
    };
    const [xMin, xMax] = pad(Math.min(1, ...xs), Math.max(1, ...xs));
    const [yMin, yMax] = pad(Math.min(1, ...ys), Math.max(1, ...ys));
    // Colour: the first knob's value on a sequential scale (it is ordered), with the scale drawn at the
    // right; shape: the second knob's value, named in the legend.
    const [colourKnob, shapeKnob] = styleKnobs();
    const cv = colourKnob ? knobValues(colourKnob) : [];
    const cMin = Math.min(...cv), cMax = Math.max(...cv);
    const colourOf = (v) => sequentialAt(cMax > cMin ? (v - cMin) / (cMax - cMin) : 0);
    const SHAPES = ['circle', 'rect', 'triangle', 'rectRot', 'crossRot', 'star', 'rectRounded', 'cross'];
    const groups = shapeKnob ? knobValues(shapeKnob) : [undefined];
    const datasets = groups.map((v, k) => {
      const members = settings.map((s, i) => [s, i]).filter(([s]) => v === undefined || s.values[shapeKnob] === v);
      return {
        label: v === undefined ? 'settings' + (colourKnob ? ' (colour: ' + knobLabel(colourKnob) + ', scale at right)' : '')
                               : knobLabel(shapeKnob) + ' = ' + v + (k === 0 ? ' (colour: ' + knobLabel(colourKnob) + ')' : ''),
        data: members.map(([s]) => point(s)), settingIndex: members.map(([, i]) => i),
        errorBars: members.map(([s]) => ({x: s.normalised.t.std, y: s.normalised.E.std})),
        pointStyle: SHAPES[k % SHAPES.length],
        pointBackgroundColor: members.map(([s]) => (colourKnob in s.values ? colourOf(s.values[colourKnob]) : '#888')),
        backgroundColor: '#999999', borderColor: 'rgba(60,60,60,0.6)', pointRadius: 6,
        // Named where it matters: the Pareto front (every setting worth choosing) and the recommendation.
        pointLabels: members.map(([s, i]) => (s.pareto || (headline && i === headline.setting_index) ? unitLabel(s) : null)),
      };
    });
    datasets.push({
      label: 'Pareto front', data: data.pareto_front.map((i) => point(settings[i])), showLine: true,
      borderColor: '#D55E00', backgroundColor: '#D55E00', borderWidth: 2, pointRadius: 0,
    }, {
      label: 'reference', data: [point(ref)], pointStyle: 'star', pointRadius: 12, borderColor: '#000',
      backgroundColor: '#000', borderWidth: 2, clip: false,
    });
    if (headline)
      datasets.push({label: 'recommended (' + headline.metric + headlineLimit + ')', data: [point(settings[headline.setting_index])],
                     pointStyle: 'circle', pointRadius: 13, borderWidth: 3, borderColor: '#009E73',
                     backgroundColor: 'rgba(0,0,0,0)', clip: false});
    const ISO_COLOURS = ['#666666', '#CC79A7', '#E69F00', '#56B4E9', '#0072B2', '#D55E00'];
    data.iso_lines.forEach((line, i) => datasets.push({
      label: line.metric + ' = reference', data: line.points.map(([x, y]) => ({x, y})), showLine: true,
      borderDash: [6, 4], borderWidth: 1.5, pointRadius: 0, borderColor: ISO_COLOURS[i % ISO_COLOURS.length],
      backgroundColor: ISO_COLOURS[i % ISO_COLOURS.length],
    }));
    const o = options('Energy vs time, normalised to the reference', 'time / reference time',
                      'energy / reference energy');
    o.plugins.legend.position = 'bottom';
    o.scales.x.min = xMin; o.scales.x.max = xMax; o.scales.y.min = yMin; o.scales.y.max = yMax;
    if (cv.length > 1) {
      o.plugins.wattwiseColorBar = {min: cMin, max: cMax, title: knobLabel(colourKnob), color: colourOf};
      o.layout = {padding: {right: 80}};
    }
    o.plugins.tooltip = {callbacks: {label: (c) => c.dataset.settingIndex
        ? settings[c.dataset.settingIndex[c.dataIndex]].label + ': t ' + c.parsed.x.toFixed(3) + ', E ' + c.parsed.y.toFixed(3)
        : c.dataset.label}};
    draw('chart-plane', {type: 'scatter', data: {datasets}, options: o});
  }

  function series(values, scale) {
    return data.grid_s.map((t, i) => (values[i] == null ? null : {x: t, y: values[i] * scale}))
        .filter((p) => p != null);
  }

  function traceCharts() {
    if (data.single_run) return singleRunCharts();
    const n = settings.length;
    // One knob: its values are ordered, a sequential scale. Two: colour tells the knob with more values
    // (categorical where few enough to tell apart, else sequential by value) and the dash the other one.
    const [colourKnob, dashKnob] = styleKnobs();
    const cv = colourKnob ? knobValues(colourKnob) : [];
    const DASHES = [[], [8, 4], [2, 3], [12, 3, 2, 3]];
    const CATEGORIES = CATEGORICAL.filter((c) => c !== '#F0E442');  // yellow is unreadable as a thin line
    const color = (tr) => {
      const s = settings[tr.setting_index];
      if (!dashKnob) return sequential(tr.setting_index, n);
      const k = cv.indexOf(s.values[colourKnob]);
      return cv.length <= CATEGORIES.length ? CATEGORIES[k] : sequential(k, cv.length);
    };
    // Legend entries are short: the values with their units ("150 W", "150 W, batch 64").
    const label = (tr) => unitLabel(settings[tr.setting_index]);
    const settingOf = (c) => settings[data.traces[c.datasetIndex].setting_index];  // power: one dataset per trace
    const dash = (tr) => (dashKnob ? DASHES[knobValues(dashKnob).indexOf(settings[tr.setting_index].values[dashKnob]) % DASHES.length] : []);
    const o = options('Power over time, mean across repeats', 'time since the run started (s)', 'power (W)');
    o.plugins.legend.labels = {boxWidth: 10, font: {size: 10}, usePointStyle: false};
    o.plugins.tooltip = {callbacks: {label: (c) => settingOf(c).label + ': ' + c.parsed.y.toFixed(1) + ' W'}};
    draw('chart-power', {type: 'line', data: {datasets: data.traces.map((tr) => ({
      label: label(tr), data: series(tr.power_mean_w, 1), borderColor: color(tr), backgroundColor: color(tr),
      borderDash: dash(tr), borderWidth: 1.4, pointRadius: 0, spanGaps: false}))}, options: o});

    const maxEnergy = Math.max(...data.traces.flatMap((tr) => tr.energy_mean_j.filter((v) => v != null)));
    const [scale, unit] = maxEnergy > 2e4 ? [1e-3, 'kJ'] : [1, 'J'];
    const datasets = [];
    data.traces.forEach((tr) => {
      const lo = tr.energy_mean_j.map((m, i) => (m == null || tr.energy_std_j[i] == null ? null : m - tr.energy_std_j[i]));
      const hi = tr.energy_mean_j.map((m, i) => (m == null || tr.energy_std_j[i] == null ? null : m + tr.energy_std_j[i]));
      datasets.push({label: label(tr), data: series(tr.energy_mean_j, scale), borderColor: color(tr),
                     backgroundColor: color(tr), borderDash: dash(tr), borderWidth: 1.4, pointRadius: 0});
      datasets.push({label: '', data: series(lo, scale), borderWidth: 0, pointRadius: 0, band: true,
                     borderColor: 'transparent'});
      datasets.push({label: '', data: series(hi, scale), borderWidth: 0, pointRadius: 0, band: true,
                     borderColor: 'transparent', backgroundColor: withAlpha(color(tr), 0.25), fill: '-1'});
    });
    const oe = options('Cumulative energy, mean \u00b1 std across repeats', 'time since the run started (s)',
                       'energy (' + unit + ')');
    oe.plugins.legend.labels = {boxWidth: 10, font: {size: 10}, usePointStyle: false,
                                filter: (item, chartData) => !chartData.datasets[item.datasetIndex].band};
    draw('chart-energy', {type: 'line', data: {datasets}, options: oe});
  }

  // One measurement: each GPU's power and their sum from 0 W, the job's phases shaded and named; its
  // cumulative energy below, the same phases shaded.
  function singleRunCharts() {
    const sr = data.single_run;
    const total = (k) => sr.series[k] === 'all GPUs';
    const datasets = sr.series.map((name, k) => ({
      label: name, data: series(sr.power_w[k], 1), borderColor: total(k) ? '#000' : categorical(k),
      backgroundColor: total(k) ? '#000' : categorical(k), borderWidth: total(k) ? 2 : 1.3, pointRadius: 0}));
    if (datasets.length === 0)  // a trace without GPU numbers: the total only
      datasets.push({label: 'all GPUs', data: series(data.traces[0].power_mean_w, 1), borderColor: '#000',
                     backgroundColor: '#000', borderWidth: 2, pointRadius: 0});
    const o = options('Power over time', 'time since the job started (s)', 'power (W)');
    o.scales.y.min = 0;
    o.plugins.legend.position = 'bottom';
    o.plugins.wattwisePhases = {spans: sr.spans};
    draw('chart-power', {type: 'line', data: {datasets}, options: o});

    const energy = data.traces[0].energy_mean_j;
    const maxEnergy = Math.max(...energy.filter((v) => v != null));
    const [scale, unit] = maxEnergy > 2e4 ? [1e-3, 'kJ'] : [1, 'J'];
    const oe = options('Cumulative energy', 'time since the job started (s)', 'energy (' + unit + ')');
    oe.scales.y.min = 0;
    oe.plugins.legend.display = false;
    oe.plugins.wattwisePhases = {spans: sr.spans};
    draw('chart-energy', {type: 'line', data: {datasets: [{label: 'all GPUs', data: series(energy, scale),
      borderColor: '#000', backgroundColor: '#000', borderWidth: 2, pointRadius: 0}]}, options: oe});
  }

  function phaseCharts() {
    const labels = settings.map(shortLabel);
    const bars = (rows) => data.phases.names.map((name, k) => ({
      label: name, data: rows.map((row) => row[k]), backgroundColor: categorical(k), borderColor: categorical(k),
    }));
    const xTitle = data.knobs.map(knobLabel).join(', ') || 'setting';
    const o = (title, y) => ({plugins: {title: {display: true, text: title, font: {size: 16, weight: 'bold'}}},
                              scales: {x: {title: {display: true, text: xTitle}}, y: {title: {display: true, text: y}}}});
    draw('chart-phase-time', {type: 'bar', data: {labels, datasets: bars(data.phases.time_s)},
                              options: o('Time per phase', 'time (s)')});
    draw('chart-phase-energy', {type: 'bar', data: {labels, datasets: bars(data.phases.energy_j)},
                                options: o('Energy per phase', 'energy (J)')});
  }

  function fitChart(knob) {
    const datasets = [];
    data.fits.filter((f) => f.knob === knob).forEach((f, i) => {
      const c = categorical(i + 1);
      datasets.push({label: quantityName(f.metric) + ' measured', data: f.xs.map((x, j) => ({x, y: f.ys[j]})),
                     borderColor: c, backgroundColor: c, pointRadius: 3});
      datasets.push({label: quantityName(f.metric) + ' fit (R\u00b2 = ' + f.r_squared.toFixed(3) + ')',
                     data: f.curve.map(([x, y]) => ({x, y})), showLine: true, pointRadius: 0, borderColor: c,
                     backgroundColor: c, borderWidth: 2});
      datasets.push({label: quantityName(f.metric) + ": fitted curve's minimum " + f.fitted_optimum[0].toFixed(0) + knobUnit(knob),
                     data: [{x: f.fitted_optimum[0], y: f.fitted_optimum[1]}], pointStyle: 'circle',
                     pointRadius: 9, borderWidth: 2, borderColor: c, backgroundColor: 'rgba(255,255,255,0)'});
      datasets.push({label: quantityName(f.metric) + ': lowest measured ' + f.measured_optimum[0].toFixed(0) + knobUnit(knob),
                     data: [{x: f.measured_optimum[0], y: f.measured_optimum[1]}], pointStyle: 'triangle',
                     pointRadius: 9, borderColor: c, backgroundColor: c});
    });
    draw('chart-fit-' + knob, {type: 'scatter', data: {datasets},
      options: options('Quadratic fits against ' + knobLabel(knob), knobLabel(knob),
                       'value / reference value (reference = 1)')});
  }

  for (const knob of data.knobs) knobChart(knob);
  planeChart();
  if (data.traces.length > 0) traceCharts();
  if (data.phases.names.length > 0) phaseCharts();
  for (const knob of data.knobs) fitChart(knob);
  document.body.dataset.chartsDrawn = String(drawn.length);
  // From navigation start to every chart drawn: what "opens and draws" costs (docs/evidence/report-timing.md).
  document.body.dataset.drawMs = String(Math.round(performance.now()));

  // "#only=<section id>" shows just that section (and the header): one chart per screenshot.
  const only = /^#only=([\w-]+)$/.exec(window.location.hash);
  if (only) document.querySelectorAll('section').forEach((s) => { if (s.id !== only[1]) s.style.display = 'none'; });
})();

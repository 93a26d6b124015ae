// The kvbridge dashboard: reads the kvbridge management endpoint once per poll interval (the next
// read starts only after the last one ended, so reads never pile up) and shows what it says. Rates
// are derived from two successive reads of each engine's counters. Memory is bounded: the charts
// keep at most historySize samples, and every table is rebuilt from the latest read only. The
// prefix index panel shows the application's prefix index, when the endpoint has one.
(function () {
  'use strict';

  const END_REASONS = ['READ', 'EXPIRED', 'REVOKED', 'RELEASED'];
  // Outcomes of a batch or snapshot the prefix index refused; GAP (a batch lost) is shown apart.
  const INDEX_REFUSALS = ['UNKNOWN_ENGINE', 'WRONG_INCARNATION', 'NOT_SYNCED', 'WRONG_MODEL'];
  const COLORS = {
    live: '#2f6fde',
    READ: '#23954a',
    EXPIRED: '#d98a00',
    REVOKED: '#d33c3c',
    RELEASED: '#8a5cd6',
    transfers: '#1b8a8f',
    bandwidth: '#4b55c9',
  };
  const BANDWIDTH_UNITS = ['B/s', 'KiB/s', 'MiB/s', 'GiB/s', 'TiB/s'];
  const READ_TIMEOUT_MILLIS = 10000;

  const state = {
    settings: null,
    previous: null, // the last read: {at, byEngine: Map(engineId -> connector), prefixIndex}
    samples: [], // oldest first, at most settings.historySize
    polls: 0,
    failures: 0,
    timer: null,
  };

  // What tests and curious operators may read; numbers only, nothing that grows.
  window.kvbridgeDashboard = {
    get polls() { return state.polls; },
    get failures() { return state.failures; },
    get samples() { return state.samples.length; },
    get historySize() { return state.settings ? state.settings.historySize : 0; },
  };

  const $ = (id) => document.getElementById(id);

  document.addEventListener('DOMContentLoaded', start);
  window.addEventListener('resize', drawCharts);

  async function start() {
    legend();
    drawCharts();
    try {
      const response = await fetch('settings.json', { cache: 'no-store' });
      if (!response.ok) {
        throw new Error('HTTP ' + response.status);
      }
      state.settings = await response.json();
    } catch (e) {
      showProblem('Cannot read the dashboard\'s settings (settings.json): ' + e.message + '.');
      return;
    }
    const s = state.settings;
    $('interval').textContent = formatMillis(s.pollIntervalMillis);
    $('window').textContent = s.historySize + ' reads (' +
        formatMillis(s.historySize * s.pollIntervalMillis) + ')';
    if (!s.endpoint) {
      $('endpoint').textContent = 'the kvbridge endpoint';
      showProblem(s.unreachable);
      return;
    }
    $('endpoint').textContent = s.endpoint;
    poll();
  }

  async function poll() {
    const s = state.settings;
    const abort = new AbortController();
    const timeout = setTimeout(() => abort.abort(), Math.max(READ_TIMEOUT_MILLIS, s.pollIntervalMillis));
    try {
      const response = await fetch(s.endpoint, {
        cache: 'no-store',
        headers: { Accept: 'application/json' },
        signal: abort.signal,
      });
      if (!response.ok) {
        throw new ReadFailure(refusal(response.status));
      }
      const status = parseStatus(await response.text());
      show(status, performance.now());
      state.polls++;
      document.body.dataset.polls = String(state.polls);
    } catch (e) {
      state.failures++;
      const why = e instanceof ReadFailure ? e.message
          : e.name === 'AbortError' ? 'Reading ' + s.endpoint + ' took longer than ' +
            formatMillis(Math.max(READ_TIMEOUT_MILLIS, s.pollIntervalMillis)) + '; retrying.'
          : 'Cannot read ' + s.endpoint + ': ' + e.message + '; retrying.';
      showProblem(why);
    } finally {
      clearTimeout(timeout);
      state.timer = setTimeout(poll, s.pollIntervalMillis);
    }
  }

  // A read the server answered, but not with the status.
  class ReadFailure extends Error {}

  function refusal(status) {
    const endpoint = state.settings.endpoint;
    if (status === 404) {
      return 'The kvbridge endpoint is not at ' + endpoint + ' (HTTP 404): it is not exposed over' +
          ' HTTP. Add kvbridge to management.endpoints.web.exposure.include (e.g. health,kvbridge).';
    }
    if (status === 401 || status === 403) {
      return 'Reading ' + endpoint + ' was refused (HTTP ' + status + '): this page needs read' +
          ' access to the kvbridge endpoint.';
    }
    return 'Reading ' + endpoint + ' failed with HTTP ' + status + '; retrying.';
  }

  // Incarnations are 64-bit: kept as the JSON text, where the browser gives it, so none is rounded.
  function parseStatus(text) {
    return JSON.parse(text, (key, value, context) =>
      key === 'incarnation' && context && typeof context.source === 'string' ? context.source : value);
  }

  function show(status, at) {
    const connectors = Array.isArray(status.connectors) ? status.connectors : [];
    const byEngine = new Map(connectors.map((c) => [c.engineId, c]));
    const rates = ratesSince(state.previous, byEngine, at);
    const prefixIndex = status.prefixIndex || null;
    const prefixIndexBefore = state.previous ? state.previous.prefixIndex : null;
    state.previous = { at, byEngine, prefixIndex };

    const producers = connectors.filter((c) => c.producer);
    const consumers = connectors.filter((c) => c.consumer);
    const sum = (list, f) => list.reduce((total, c) => total + f(c), 0);
    const total = {
      live: sum(producers, (c) => c.producer.liveLeases),
      inFlight: sum(consumers, (c) => c.consumer.loadsInFlight),
      failed: sum(consumers, (c) => c.consumer.loadsFailed),
      rejected: sum(connectors, (c) => sum(Object.values(c.rejected || {}), (n) => n)),
    };

    record({
      at,
      live: total.live,
      ended: rates.ended,
      transfers: rates.transfers,
      bytes: rates.bytes,
    });

    document.body.dataset.state = 'ok';
    $('problem').hidden = true;
    $('connector').textContent = connectorLine(status);
    $('updated').textContent = 'updated ' + new Date().toLocaleTimeString('en-GB');
    if (status.availability && status.availability.available === false) {
      showProblem('The ' + status.connectorType + ' connector cannot run here: ' +
          status.availability.reason);
    }

    setMetric($('total-live'), formatCount(total.live));
    setMetric($('total-rate'), rates.known ? formatRate(rates.transfers) : '\u2013');
    setMetric($('total-bandwidth'), rates.known ? formatBandwidth(rates.bytes) : '\u2013');
    setMetric($('total-inflight'), formatCount(total.inFlight));
    setMetric($('total-failed'), formatCount(total.failed), total.failed > 0);
    setMetric($('total-rejected'), formatCount(total.rejected), total.rejected > 0);

    showProducers(producers);
    showConsumers(consumers, rates);
    showCounts($('rejected'), 'Kind', connectors, (c) => c.rejected, 'rejected');
    showCounts($('dropped'), 'Reason', producers, (c) => c.producer.droppedConnections,
        'droppedConnections');
    showPeers(consumers);
    showPrefixIndex(prefixIndex, prefixIndexBefore);
    drawCharts();
  }

  // Per-second rates between two reads, per engine and in all. An engine seen for the first time,
  // or under a new incarnation (its counters started again), adds nothing until its next read.
  function ratesSince(previous, byEngine, at) {
    const rates = { known: false, transfers: 0, bytes: 0, ended: {}, byEngine: new Map() };
    END_REASONS.forEach((r) => { rates.ended[r] = 0; });
    if (!previous || at <= previous.at) {
      return rates;
    }
    rates.known = true;
    const seconds = (at - previous.at) / 1000;
    byEngine.forEach((now, engineId) => {
      const before = previous.byEngine.get(engineId);
      if (!before || before.incarnation !== now.incarnation) {
        return;
      }
      if (now.consumer && before.consumer) {
        const transfers = Math.max(0, now.consumer.readsCompleted - before.consumer.readsCompleted) / seconds;
        const bytes = Math.max(0, now.consumer.bytesRead - before.consumer.bytesRead) / seconds;
        rates.byEngine.set(engineId, { transfers, bytes });
        rates.transfers += transfers;
        rates.bytes += bytes;
      }
      if (now.producer && before.producer) {
        END_REASONS.forEach((r) => {
          rates.ended[r] += Math.max(0, count(now.producer.leasesEnded, r) -
              count(before.producer.leasesEnded, r)) / seconds;
        });
      }
    });
    return rates;
  }

  function record(sample) {
    const samples = state.samples;
    samples.push(sample);
    const excess = samples.length - state.settings.historySize;
    if (excess > 0) {
      samples.splice(0, excess);
    }
  }

  // ------------------------------------------------------------------ tables

  function showProducers(producers) {
    const most = producers.reduce((m, c) => Math.max(m, c.producer.liveLeases), 1);
    const rows = producers.map((c) => {
      const p = c.producer;
      return row([
        cell(c.engineId, { cls: 'engine' }),
        barCell(p.liveLeases, most, { engine: c.engineId, metric: 'liveLeases' }),
        cell(formatDuration(p.soonestExpiry), { engine: c.engineId, metric: 'soonestExpiry' }),
        numberCell(p.leasesGranted, { engine: c.engineId, metric: 'leasesGranted' }),
        ...END_REASONS.map((r) => numberCell(count(p.leasesEnded, r),
            { engine: c.engineId, metric: 'leasesEnded.' + r, bad: r === 'REVOKED' || r === 'EXPIRED' })),
        cell((p.consumers || []).join(', ') || '\u2013', { engine: c.engineId, metric: 'consumers' }),
      ]);
    });
    fill($('producers'), rows, 9, 'No producer engine.');
  }

  function showConsumers(consumers, rates) {
    const rows = consumers.map((c) => {
      const d = c.consumer;
      const rate = rates.byEngine.get(c.engineId);
      return row([
        cell(c.engineId, { cls: 'engine' }),
        numberCell(d.loadsInFlight, { engine: c.engineId, metric: 'loadsInFlight' }),
        numberCell(d.readsCompleted, { engine: c.engineId, metric: 'readsCompleted' }),
        numberCell(d.bytesRead, { engine: c.engineId, metric: 'bytesRead' }),
        cell(rate ? formatRate(rate.transfers) : '\u2013', { engine: c.engineId, metric: 'transfersPerSecond', cls: 'num' }),
        cell(rate ? formatBandwidth(rate.bytes) : '\u2013', { engine: c.engineId, metric: 'bandwidth', cls: 'num' }),
        numberCell(d.loadsFailed, { engine: c.engineId, metric: 'loadsFailed', bad: true }),
      ]);
    });
    fill($('consumers'), rows, 7, 'No consumer engine.');
  }

  // Counts by kind, one row per kind and one column per engine that has them, flagged when not zero.
  function showCounts(table, title, engines, countsOf, metric) {
    const head = document.createElement('tr');
    head.append(cell(title, { tag: 'th' }),
        ...engines.map((c) => cell(c.engineId, { tag: 'th', cls: 'num' })));
    table.tHead.replaceChildren(head);
    const kinds = [];
    engines.forEach((c) => Object.keys(countsOf(c) || {}).forEach((k) => {
      if (!kinds.includes(k)) {
        kinds.push(k);
      }
    }));
    const rows = kinds.map((kind) => row([
      cell(kind, { cls: 'kind' }),
      ...engines.map((c) => numberCell(count(countsOf(c), kind),
          { engine: c.engineId, metric: metric + '.' + kind, bad: true })),
    ]));
    fill(table, rows, engines.length + 1, engines.length === 0 ? 'No engine.' : 'Nothing counted.');
  }

  function showPeers(consumers) {
    const rows = [];
    consumers.forEach((c) => (c.consumer.producers || []).forEach((peer) => {
      const where = { engine: c.engineId, peer: peer.engineId };
      rows.push(row([
        cell(c.engineId, { cls: 'engine' }),
        cell(peer.engineId, { cls: 'engine' }),
        cell(String(peer.incarnation), { ...where, metric: 'incarnation', cls: 'mono' }),
        cell(peer.address, { ...where, metric: 'address', cls: 'mono' }),
        cell(formatNanos(peer.clockOffsetNanos, true), { ...where, metric: 'clockOffset', cls: 'num' }),
        cell('\u00b1 ' + formatNanos(peer.clockUncertaintyNanos, false), { ...where, metric: 'clockUncertainty', cls: 'num' }),
      ]));
    }));
    fill($('peers'), rows, 6, 'No handshake completed yet.');
  }

  // The panel is hidden unless the endpoint has a prefix index. The recent hit rate is that of the
  // requests routed between the last two reads, when there were some; counts that went down mean
  // the application started again, and say nothing about the interval.
  function showPrefixIndex(index, before) {
    const panel = $('prefix-index');
    panel.hidden = !index;
    if (!index) {
      return;
    }
    const offered = index.offered || {};
    const refusedByIndex = INDEX_REFUSALS.reduce((total, o) => total + count(offered, o), 0);
    const refused = refusedByIndex + index.refused;
    const lost = count(offered, 'GAP');

    setMetric($('prefix-blocks'), formatCount(index.blocks));
    setMetric($('prefix-engines'), formatCount(index.engines));
    setMetric($('prefix-hit-rate'), index.requests > 0
        ? formatPercent(index.cacheRouted, index.requests) : '\u2013');
    $('prefix-requests').textContent = index.requests > 0
        ? formatCount(index.cacheRouted) + ' of ' + formatCount(index.requests) + ' requests'
        : 'no request yet';

    const requests = before ? index.requests - before.requests : 0;
    const cacheRouted = before ? index.cacheRouted - before.cacheRouted : 0;
    const grew = requests > 0 && cacheRouted >= 0;
    setMetric($('prefix-hit-rate-recent'), grew ? formatPercent(cacheRouted, requests) : '\u2013');
    $('prefix-requests-recent').textContent = grew
        ? formatCount(cacheRouted) + ' of ' + formatCount(requests) + ' requests'
        : !before ? 'from the next read on'
        : requests < 0 || cacheRouted < 0 ? 'counts started again' : 'no new request';

    setMetric($('prefix-applied'), formatCount(count(offered, 'APPLIED')));
    setMetric($('prefix-repeated'), formatCount(count(offered, 'REPEATED')));
    setMetric($('prefix-lost'), formatCount(lost), lost > 0);
    setMetric($('prefix-refused'), formatCount(refused), refused > 0);
    $('prefix-refused-figure').title = 'Refused by the index: ' +
        INDEX_REFUSALS.map((o) => o + ' ' + formatCount(count(offered, o))).join(', ') +
        '; refused before it (malformed, or naming another engine): ' + formatCount(index.refused);
    setMetric($('prefix-unauthenticated'), formatCount(index.unauthenticated),
        index.unauthenticated > 0);
    setMetric($('prefix-unreachable'), formatCount(index.unreachable), index.unreachable > 0);
    setMetric($('prefix-resyncs'), formatCount(index.resyncs));
  }

  function fill(table, rows, columns, empty) {
    const body = table.tBodies[0];
    if (rows.length === 0) {
      const td = cell(empty, { cls: 'empty' });
      td.colSpan = columns;
      body.replaceChildren(row([td]));
    } else {
      body.replaceChildren(...rows);
    }
  }

  function row(cells) {
    const tr = document.createElement('tr');
    tr.append(...cells);
    return tr;
  }

  function cell(text, options) {
    const o = options || {};
    const td = document.createElement(o.tag || 'td');
    td.textContent = text;
    if (o.cls) {
      td.className = o.cls;
    }
    if (o.engine !== undefined) {
      td.dataset.engine = o.engine;
    }
    if (o.peer !== undefined) {
      td.dataset.peer = o.peer;
    }
    if (o.metric !== undefined) {
      td.dataset.metric = o.metric;
    }
    return td;
  }

  function numberCell(value, options) {
    const td = cell(formatCount(value), { ...options, cls: 'num' });
    if (options.bad && value > 0) {
      td.classList.add('bad');
    }
    return td;
  }

  function barCell(value, most, options) {
    const td = cell('', options);
    td.className = 'bar';
    const bar = document.createElement('span');
    bar.className = 'fill';
    bar.style.width = Math.round((100 * value) / most) + '%';
    const label = document.createElement('span');
    label.className = 'count';
    label.textContent = formatCount(value);
    td.append(bar, label);
    return td;
  }

  function setMetric(element, text, bad) {
    element.textContent = text;
    element.classList.toggle('bad', !!bad);
  }

  function showProblem(message) {
    document.body.dataset.state = 'problem';
    const problem = $('problem');
    problem.textContent = message;
    problem.hidden = false;
    if (state.polls === 0) {
      $('updated').textContent = 'no data';
    }
  }

  function connectorLine(status) {
    const engines = (status.connectors || []).length;
    return (status.connectorType || '?') + ' connector \u00b7 ' + engines +
        (engines === 1 ? ' engine' : ' engines');
  }

  function legend() {
    const items = [['live', 'live (held now)']].concat(END_REASONS.map((r) => [r, r + ' / s']));
    $('leases-legend').replaceChildren(...items.map(([key, text]) => {
      const item = document.createElement('span');
      const swatch = document.createElement('i');
      swatch.style.background = COLORS[key];
      item.append(swatch, text);
      return item;
    }));
  }

  // ------------------------------------------------------------------ charts

  function drawCharts() {
    const samples = state.samples;
    drawChart($('leases-chart'), samples, [
      { values: samples.map((s) => s.live), color: COLORS.live, fill: true },
      ...END_REASONS.map((r) => ({ values: samples.map((s) => s.ended[r]), color: COLORS[r] })),
    ], countAxis);
    drawChart($('transfers-chart'), samples,
        [{ values: samples.map((s) => s.transfers), color: COLORS.transfers, fill: true }], countAxis);
    drawChart($('bandwidth-chart'), samples,
        [{ values: samples.map((s) => s.bytes), color: COLORS.bandwidth, fill: true }], bytesAxis);
  }

  // A chart of series over the last historySize reads; axisFor(largest value) gives the top of the
  // axis, its number of steps and how to label a value.
  function drawChart(canvas, samples, series, axisFor) {
    const ratio = window.devicePixelRatio || 1;
    const width = canvas.clientWidth;
    const height = canvas.clientHeight;
    if (width === 0 || height === 0) {
      return;
    }
    if (canvas.width !== Math.round(width * ratio) || canvas.height !== Math.round(height * ratio)) {
      canvas.width = Math.round(width * ratio);
      canvas.height = Math.round(height * ratio);
    }
    const g = canvas.getContext('2d');
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, width, height);
    g.font = '11px system-ui, "Liberation Sans", "DejaVu Sans", sans-serif';
    g.fillStyle = '#5b6475';
    if (samples.length === 0 || !state.settings) {
      g.textAlign = 'center';
      g.textBaseline = 'middle';
      g.fillText('no data yet', width / 2, height / 2);
      return;
    }

    const largest = series.reduce((m, s) => s.values.reduce((n, v) => Math.max(n, v), m), 0);
    const axis = axisFor(largest);
    const labels = [];
    for (let i = 0; i <= axis.steps; i++) {
      labels.push(axis.label((axis.top * i) / axis.steps));
    }
    const left = 10 + labels.reduce((w, text) => Math.max(w, g.measureText(text).width), 0);
    const right = 8;
    const top = 8;
    const bottom = 20;
    const plotWidth = width - left - right;
    const plotHeight = height - top - bottom;
    const span = state.settings.historySize * state.settings.pollIntervalMillis;
    const now = samples[samples.length - 1].at;
    const x = (at) => left + plotWidth * (1 - (now - at) / span);
    const y = (v) => top + plotHeight * (1 - v / axis.top);

    g.lineWidth = 1;
    g.strokeStyle = '#e3e7ee';
    g.textAlign = 'right';
    g.textBaseline = 'middle';
    labels.forEach((text, i) => {
      const py = Math.round(y((axis.top * i) / axis.steps)) + 0.5;
      g.beginPath();
      g.moveTo(left, py);
      g.lineTo(width - right, py);
      g.stroke();
      g.fillText(text, left - 6, py);
    });
    g.textBaseline = 'top';
    g.textAlign = 'left';
    g.fillText('\u2212' + formatMillis(span), left, height - bottom + 5);
    g.textAlign = 'right';
    g.fillText('now', width - right, height - bottom + 5);

    // Reads that came late stretch the history past the window: what falls before it is cut off.
    g.save();
    g.beginPath();
    g.rect(left, 0, plotWidth, height);
    g.clip();
    series.forEach((s) => {
      g.beginPath();
      s.values.forEach((v, i) => {
        const px = x(samples[i].at);
        const py = y(v);
        if (i === 0) {
          g.moveTo(px, py);
        } else {
          g.lineTo(px, py);
        }
      });
      g.strokeStyle = s.color;
      g.lineWidth = 1.75;
      g.stroke();
      if (s.fill && s.values.length > 1) {
        g.lineTo(x(samples[samples.length - 1].at), y(0));
        g.lineTo(x(samples[0].at), y(0));
        g.closePath();
        g.globalAlpha = 0.12;
        g.fillStyle = s.color;
        g.fill();
        g.globalAlpha = 1;
      }
    });
    g.restore();
  }

  function countAxis(largest) {
    const nice = niceCeiling(largest);
    return { top: nice.top, steps: nice.steps, label: formatCompact };
  }

  // Bytes per second in the binary unit that fits the largest value, ticks round in that unit.
  function bytesAxis(largest) {
    let unit = 0;
    while (unit < BANDWIDTH_UNITS.length - 1 && largest >= Math.pow(1024, unit + 1)) {
      unit++;
    }
    const scale = Math.pow(1024, unit);
    const nice = niceCeiling(largest / scale);
    return {
      top: nice.top * scale,
      steps: nice.steps,
      label: (v) => (v / scale).toLocaleString('en-US', { maximumFractionDigits: 2 }) + ' ' +
          BANDWIDTH_UNITS[unit],
    };
  }

  // The axis's top, at least 1: 1, 2, 2.5 or 5 times a power of ten at or above value, with a
  // number of steps that keeps the ticks round.
  function niceCeiling(value) {
    const power = value > 1 ? Math.pow(10, Math.floor(Math.log10(value))) : 1;
    for (const [step, steps] of [[1, 4], [2, 4], [2.5, 5], [5, 5], [10, 5]]) {
      if (value <= step * power) {
        return { top: step * power, steps };
      }
    }
    return { top: 10 * power, steps: 5 };
  }

  // ------------------------------------------------------------------ formats

  function count(counts, key) {
    return counts && typeof counts[key] === 'number' ? counts[key] : 0;
  }

  function formatCount(n) {
    return Number(n).toLocaleString('en-US');
  }

  // part / whole as a percentage with one decimal, e.g. 66.7%.
  function formatPercent(part, whole) {
    return ((100 * part) / whole).toLocaleString('en-US',
        { minimumFractionDigits: 1, maximumFractionDigits: 1 }) + '%';
  }

  function formatCompact(n) {
    return n >= 1000 ? (n / 1000).toLocaleString('en-US', { maximumFractionDigits: 1 }) + 'k'
        : n.toLocaleString('en-US', { maximumFractionDigits: 2 });
  }

  function formatRate(perSecond) {
    return perSecond.toLocaleString('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 });
  }

  function formatBandwidth(bytesPerSecond) {
    let v = bytesPerSecond;
    let u = 0;
    while (v >= 1024 && u < BANDWIDTH_UNITS.length - 1) {
      v /= 1024;
      u++;
    }
    return v.toLocaleString('en-US', { maximumFractionDigits: u === 0 ? 0 : 2 }) + ' ' +
        BANDWIDTH_UNITS[u];
  }

  // Milliseconds with three decimals: what the endpoint says, to the microsecond.
  function formatNanos(nanos, signed) {
    const text = (nanos / 1e6).toFixed(3) + ' ms';
    return signed && nanos >= 0 ? '+' + text : text.replace('-', '\u2212');
  }

  function formatMillis(millis) {
    if (millis < 1000) {
      return millis + ' ms';
    }
    const seconds = millis / 1000;
    if (seconds < 120) {
      return seconds.toLocaleString('en-US', { maximumFractionDigits: 1 }) + ' s';
    }
    return (seconds / 60).toLocaleString('en-US', { maximumFractionDigits: 1 }) + ' min';
  }

  // An ISO-8601 duration as the endpoint writes it (PT1.5S, PT2M3S), in seconds.
  function formatDuration(iso) {
    if (iso === null || iso === undefined) {
      return '\u2013';
    }
    const m = /^PT(?:(-?\d+)H)?(?:(-?\d+)M)?(?:(-?[\d.]+)S)?$/.exec(iso);
    if (!m) {
      return iso;
    }
    const seconds = 3600 * (+m[1] || 0) + 60 * (+m[2] || 0) + (+m[3] || 0);
    return 'in ' + seconds.toLocaleString('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 }) + ' s';
  }
})();

// Ringcast status page: reads /metrics (Prometheus text) every second and draws the last five
// minutes of the main figures. No dependencies. Tests read window.ringcastStatus.
const PERIOD_MS = 1000;
const KEEP = 300; // samples: five minutes

/** What is charted: a name, how to get the value from one scrape (and the one before), a unit. */
const CHARTS = [
    { id: 'sessions', title: 'connections', value: (m) => m.get('ringcast_sessions') },
    { id: 'subscriptions', title: 'subscriptions', value: (m) => m.get('ringcast_subscriptions') },
    { id: 'topics', title: 'topics', value: (m) => m.get('ringcast_topics') },
    { id: 'publishes', title: 'publishes / s', value: (m, p, s) => rate(m, p, s, 'ringcast_publishes_total') },
    { id: 'deliveries', title: 'deliveries / s', value: (m, p, s) => rate(m, p, s, 'ringcast_deliveries_total') },
    { id: 'bytes', title: 'bytes / s in · out', value: (m, p, s) => rate(m, p, s, 'ringcast_received_bytes_total'),
      second: (m, p, s) => rate(m, p, s, 'ringcast_delivered_bytes_total') },
    { id: 'latency', title: 'publish → write, ms p50 · p99', unit: 'ms', value: (m, p) => quantile(m, p, 0.5),
      second: (m, p) => quantile(m, p, 0.99) },
    { id: 'conflated', title: 'conflated / s · slow-consumer closes / s',
      value: (m, p, s) => rate(m, p, s, 'ringcast_conflated_updates_total'),
      second: (m, p, s) => rate(m, p, s, 'ringcast_slow_consumer_disconnects_total') },
    { id: 'errors', title: 'errors sent / s', value: (m, p, s) => rate(m, p, s, 'ringcast_protocol_errors_total') },
    { id: 'ring', title: 'inbound ring free slots', value: (m) => m.get('ringcast_inbound_ring_remaining') },
    { id: 'cluster', title: 'cluster view · unapplied log entries', optional: 'ringcast_cluster_view_size',
      value: (m) => m.get('ringcast_cluster_view_size'), second: (m) => m.get('ringcast_cluster_log_unapplied_entries') },
];

/** Parses the text format: "name{labels} value" lines; '#' lines skipped. Labelled series keyed with their labels. */
export function parseMetrics(text) {
    const out = new Map();
    for (const line of text.split('\n')) {
        if (line === '' || line.startsWith('#')) continue;
        const space = line.lastIndexOf(' ');
        const key = line.slice(0, space);
        const value = Number(line.slice(space + 1));
        if (!Number.isNaN(value)) out.set(key, value);
    }
    return out;
}

function rate(m, prev, seconds, name) {
    if (!prev || !(seconds > 0) || !m.has(name) || !prev.has(name)) return null;
    return Math.max(0, (m.get(name) - prev.get(name)) / seconds);
}

/** A quantile (ms) of the histogram's observations between two scrapes, from the cumulative buckets. */
function quantile(m, prev, q) {
    if (!prev) return null;
    const buckets = [];
    for (const [key, value] of m) {
        const match = /^ringcast_publish_to_write_seconds_bucket\{.*le="([^"]+)".*\}$/.exec(key);
        // Number('+Inf') is NaN, which would sort anywhere: the +Inf bucket must be last, it holds the total
        const le = match && (match[1] === '+Inf' ? Infinity : Number(match[1]));
        if (match) buckets.push({ le, count: value - (prev.get(key) ?? 0) });
    }
    buckets.sort((a, b) => a.le - b.le);
    const total = buckets.length ? buckets[buckets.length - 1].count : 0;
    if (!(total > 0)) return null;
    const want = q * total;
    let lower = 0;
    let below = 0;
    for (const b of buckets) {
        if (b.count >= want) {
            if (!Number.isFinite(b.le)) return lower * 1000; // past the last bound: say the last bound
            const within = b.count - below;
            const share = within > 0 ? (want - below) / within : 1;
            return (lower + (b.le - lower) * share) * 1000; // linear within the bucket, as Prometheus does
        }
        lower = b.le;
        below = b.count;
    }
    return null;
}

function format(v) {
    if (v === null || v === undefined) return '–';
    if (v >= 1e9) return (v / 1e9).toFixed(1) + 'G';
    if (v >= 1e6) return (v / 1e6).toFixed(1) + 'M';
    if (v >= 1e4) return (v / 1e3).toFixed(1) + 'k';
    if (Number.isInteger(v)) return String(v);
    return v < 10 ? v.toFixed(2) : v.toFixed(0);
}

/**
 * For tests and the console: successful scrapes, failed ones, the latest scrape (series name with
 * its labels to value), each chart's current value by chart id (a rate per second for counters,
 * the value for gauges, ms for latency), how many points each chart holds, where each chart drew
 * (plots: the plot's left edge, its first and last point's x, its width, the value axis's top and
 * the time labels) and the cluster object of the latest /health (null for a single node).
 */
const state = { samples: 0, failures: 0, latest: {}, rates: {}, series: {}, plots: {}, cluster: null };
window.ringcastStatus = state;

const panels = new Map();
function panel(chart) {
    let p = panels.get(chart.id);
    if (!p) {
        const el = document.createElement('section');
        el.className = 'chart';
        el.dataset.chart = chart.id;
        el.innerHTML = `<h2><span>${chart.title}</span><span class="now"><span class="a">–</span>`
            + (chart.second ? ' · <span class="b">–</span>' : '') + '</span></h2><canvas></canvas>';
        document.getElementById('charts').append(el);
        p = { el, canvas: el.querySelector('canvas'), a: el.querySelector('.a'), b: el.querySelector('.b'), points: [],
            times: [] };
        panels.set(chart.id, p);
    }
    return p;
}

/** Adds a point (a pair of values, either null for none) read at {@code at} ms, dropping the oldest past KEEP. */
function add(p, values, at) {
    p.points.push(values);
    p.times.push(at);
    if (p.points.length > KEEP) {
        p.points.shift();
        p.times.shift();
    }
}

/** The value axis's top: 1, 2 or 5 times a power of ten, at or above {@code highest} with some headroom. */
export function niceMax(highest) {
    if (!(highest > 0)) return 1;
    const want = highest * 1.1;
    const power = 10 ** Math.floor(Math.log10(want));
    for (const step of [1, 2, 2.5, 5, 10]) {
        if (step * power >= want) return step * power;
    }
    return 10 * power;
}

/** An axis label: short, 250k rather than 250.0k, 1.25 rather than 1.25000. */
export function axisLabel(v) {
    for (const [unit, suffix] of [[1e9, 'G'], [1e6, 'M'], [1e3, 'k']]) {
        if (v >= unit) return Number((v / unit).toFixed(2)) + suffix;
    }
    return String(Number(v.toFixed(2)));
}

/** Time ticks for a window of {@code spanSeconds}: a round step giving at most five ticks back from now. */
export function timeTicks(spanSeconds) {
    const step = [1, 2, 5, 10, 15, 30, 60, 120, 300].find((s) => spanSeconds / s <= 5) ?? 300;
    const ticks = [];
    for (let back = 0; back <= spanSeconds + 1e-9; back += step) {
        ticks.push({ back, label: back === 0 ? 'now' : back % 60 === 0 ? `-${back / 60}m` : `-${back}s` });
    }
    return ticks;
}

const AXIS_LEFT = 44; // px for the value labels
const AXIS_BOTTOM = 13; // px for the time labels

/**
 * One chart: its values over time (newest at the right edge; the window is the time read so far, up
 * to five minutes, so the chart is filled from its first second), a value axis from 0 with two
 * gridlines and a time axis back from now.
 */
function draw(p) {
    const c = p.canvas;
    const width = c.clientWidth;
    const height = c.clientHeight;
    if (c.width !== width * devicePixelRatio) {
        c.width = width * devicePixelRatio;
        c.height = height * devicePixelRatio;
    }
    const g = c.getContext('2d');
    g.setTransform(devicePixelRatio, 0, 0, devicePixelRatio, 0, 0);
    g.clearRect(0, 0, width, height);
    let highest = 0;
    for (const [a, b] of p.points) highest = Math.max(highest, a ?? 0, b ?? 0);
    const max = niceMax(highest);
    const styles = getComputedStyle(document.body);
    const plotWidth = width - AXIS_LEFT;
    const plotHeight = height - AXIS_BOTTOM - 6;
    const newest = p.times[p.times.length - 1] ?? 0;
    const span = Math.max(1, (newest - (p.times[0] ?? newest)) / 1000); // seconds shown
    const x = (at) => AXIS_LEFT + plotWidth - ((newest - at) / 1000 / span) * plotWidth;
    const y = (v) => 6 + plotHeight - (v / max) * plotHeight;
    // axes: gridlines at 0, half and the top; time ticks back from now
    const dim = styles.getPropertyValue('--dim').trim() || '#56627a';
    g.font = '10px ' + (styles.getPropertyValue('--mono').trim() || 'monospace');
    g.fillStyle = dim;
    g.strokeStyle = styles.getPropertyValue('--panel-border').trim() || '#1e2738';
    g.lineWidth = 1;
    g.textBaseline = 'middle';
    g.textAlign = 'right';
    for (const v of [0, max / 2, max]) {
        g.beginPath();
        g.moveTo(AXIS_LEFT, Math.round(y(v)) + 0.5);
        g.lineTo(width, Math.round(y(v)) + 0.5);
        g.stroke();
        g.fillText(axisLabel(v) + (p.unit && v === max ? ' ' + p.unit : ''), AXIS_LEFT - 4, y(v));
    }
    g.textBaseline = 'bottom';
    for (const tick of timeTicks(span)) {
        const tx = AXIS_LEFT + plotWidth - (tick.back / span) * plotWidth;
        g.textAlign = tick.back === 0 ? 'right' : tx - AXIS_LEFT < 14 ? 'left' : 'center';
        g.fillText(tick.label, tx, height);
    }
    state.plots[p.el.dataset.chart] = {
        left: AXIS_LEFT, firstX: p.times.length ? x(p.times[0]) : null, lastX: p.times.length ? x(newest) : null,
        width, top: max, timeLabels: timeTicks(span).map((t) => t.label),
    };
    for (const [index, color] of [[0, styles.getPropertyValue('--accent')], [1, styles.getPropertyValue('--second')]]) {
        g.strokeStyle = g.fillStyle = color.trim() || '#5aa9ff';
        g.lineWidth = 1.5;
        g.beginPath();
        p.points.forEach((point, i) => {
            const v = point[index];
            if (v === null || v === undefined) return;
            const px = x(p.times[i]);
            const py = y(v);
            const before = p.points[i - 1]?.[index];
            if (before === null || before === undefined) g.moveTo(px, py); else g.lineTo(px, py);
            const after = p.points[i + 1]?.[index];
            if (after === null || after === undefined) g.fillRect(px - 1.5, py - 1.5, 3, 3); // a dot ends each run, so a lone point shows too
        });
        g.stroke();
    }
}

/** Text safe inside HTML. */
function esc(v) {
    return String(v ?? '–').replace(/[&<>"]/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[ch]);
}

function bytes(n) {
    if (!(n >= 0)) return '–';
    if (n >= 1 << 20) return (n / (1 << 20)).toFixed(1) + ' MB';
    if (n >= 1 << 10) return (n / (1 << 10)).toFixed(1) + ' kB';
    return n + ' B';
}

function ago(atMs) {
    const s = Math.max(0, Math.round((Date.now() - atMs) / 1000));
    return s < 120 ? `${s} s ago` : `${Math.round(s / 60)} min ago`;
}

/**
 * The cluster as this node's /health tells it: every configured member (in this node's view or not,
 * the groups it leads, how far behind the leader's log it is, which only a leader knows), then each
 * Raft group (leader, term, commit and applied index, entries appended but not committed, publishes
 * queued, snapshots: how many, and the last one's size, time and age).
 */
export function renderCluster(c) {
    const view = new Set(c.view ?? []);
    const lag = new Map();
    for (const g of c.groups ?? []) {
        for (const f of g.followers ?? []) lag.set(`${g.name} ${f.member}`, f.lag);
    }
    const led = (member) => (c.groups ?? []).filter((g) => g.leader === member).map((g) => g.name);
    const lagOf = (member) => {
        const known = (c.groups ?? []).filter((g) => g.leader === c.node && member !== c.node)
            .map((g) => lag.get(`${g.name} ${member}`)).filter((v) => v !== undefined);
        return known.length ? String(Math.max(...known)) : member === c.node || led(member).length ? '0' : '–';
    };
    let html = `<h2>cluster · this node <b>${esc(c.node)}</b> · engine ${esc(c.engine)} · `
        + `${c.majority ? '<span class="up">leader known</span>' : '<span class="out">no leader known</span>'} · `
        + `${c.ready ? 'caught up' : '<span class="out">catching up</span>'}</h2>`;
    html += '<table class="members"><tr><th>member</th><th>state</th><th>leads</th><th class="num">lag (entries)</th></tr>';
    for (const m of c.members ?? []) {
        const state = m === c.node ? '<span class="up">this node</span>'
            : view.has(m) ? '<span class="up">in view</span>' : '<span class="out">not in view</span>';
        const groups = led(m);
        html += `<tr data-member="${esc(m)}"><td${groups.length ? ' class="lead"' : ''}>${esc(m)}</td><td>${state}</td>`
            + `<td>${groups.length ? esc(groups.join(' ')) : ''}</td><td class="num lag">${esc(lagOf(m))}</td></tr>`;
    }
    html += '</table><table class="groups"><tr><th>group</th><th>leader</th><th class="num">term</th>'
        + '<th class="num">commit</th><th class="num">applied</th><th class="num">uncommitted</th>'
        + '<th class="num">queued</th><th class="num">snapshots</th><th>last snapshot</th></tr>';
    for (const g of c.groups ?? []) {
        const s = g.lastSnapshot;
        html += `<tr data-group="${esc(g.name)}"><td>${esc(g.name)}</td><td class="lead">${esc(g.leader ?? 'none')}</td>`
            + `<td class="num">${esc(g.term)}</td><td class="num">${esc(g.commitIndex)}</td>`
            + `<td class="num">${esc(g.appliedIndex)}</td><td class="num">${esc(Math.max(0, g.lastAppended - g.commitIndex))}</td>`
            + `<td class="num">${esc(g.queuedPublishes)}</td><td class="num">${esc(g.snapshots)}</td>`
            + `<td>${s ? `${bytes(s.bytes)} in ${s.millis} ms, ${ago(s.atMs)}` : 'none yet'}</td></tr>`;
    }
    html += '</table><p class="note">lag: entries of the leader\'s log a member does not have yet, as the leader of the'
        + ' group knows it (on its page; elsewhere only the leaders\' own 0) · uncommitted: entries in this node\'s log'
        + ' not known committed yet · term: elections so far</p>';
    return html;
}

/** Reads /health for the cluster panel: shown when the node is a cluster member, left as it was when unreadable. */
let clusterInFlight = false;
async function readCluster() {
    if (clusterInFlight) return;
    clusterInFlight = true;
    let health;
    try {
        const response = await fetch('/health', { cache: 'no-store', signal: AbortSignal.timeout(5 * PERIOD_MS) });
        if (!response.ok) return;
        health = await response.json();
    } catch (e) {
        return; // /metrics says the node is down, if it is
    } finally {
        clusterInFlight = false;
    }
    const panelEl = document.getElementById('cluster');
    if (!health.cluster) {
        panelEl.hidden = true;
        return;
    }
    state.cluster = health.cluster;
    panelEl.innerHTML = renderCluster(health.cluster);
    panelEl.hidden = false;
}

let previous = null;
let previousAt = 0;
let inFlight = false;
let lastUp = null;

/** While /metrics cannot be read: the banner, and an empty point per chart so the gap shows in time. */
function down(message) {
    state.failures++;
    const badge = document.getElementById('scrape');
    badge.textContent = 'down';
    badge.className = 'badge down';
    const banner = document.getElementById('down');
    banner.textContent = `Cannot read /metrics (${message}): the node is down or unreachable. Retrying every second;`
        + (lastUp ? ` last read at ${lastUp.toLocaleTimeString()}.` : ' nothing read yet.');
    banner.hidden = false;
    for (const p of panels.values()) {
        add(p, [null, null], Date.now());
        p.a.textContent = '–';
        if (p.b) p.b.textContent = '–';
        draw(p);
    }
    previous = null; // a restarted node's counters start again: no rate across the gap
}

async function scrape() {
    if (inFlight) return; // a node that accepts and never answers: one request at a time, not one more per second
    inFlight = true;
    let metrics;
    try {
        const response = await fetch('/metrics', { cache: 'no-store', signal: AbortSignal.timeout(5 * PERIOD_MS) });
        if (!response.ok) throw new Error(`it answered ${response.status}`);
        metrics = parseMetrics(await response.text());
    } catch (e) {
        down(e.name === 'TimeoutError' ? 'no answer in 5 s' : e.message);
        return;
    } finally {
        inFlight = false;
    }
    const now = performance.now();
    const seconds = previous ? (now - previousAt) / 1000 : 0;
    for (const chart of CHARTS) {
        if (chart.optional && !metrics.has(chart.optional)) continue;
        const a = chart.value(metrics, previous, seconds) ?? null;
        const b = chart.second ? chart.second(metrics, previous, seconds) ?? null : undefined;
        const p = panel(chart);
        p.unit = chart.unit;
        add(p, [a, b], Date.now());
        p.a.textContent = format(a);
        if (p.b) p.b.textContent = format(b);
        state.rates[chart.id] = a;
        state.series[chart.id] = p.points.length;
        draw(p);
    }
    state.latest = Object.fromEntries(metrics);
    state.samples++;
    previous = metrics;
    previousAt = now;
    lastUp = new Date();
    const badge = document.getElementById('scrape');
    badge.textContent = `live · ${lastUp.toLocaleTimeString()}`;
    badge.className = 'badge up';
    document.getElementById('down').hidden = true;
    await readCluster();
    document.body.dataset.ready = 'true';
}

scrape();
setInterval(scrape, PERIOD_MS);

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
 * the value for gauges, ms for latency) and how many points each chart holds.
 */
const state = { samples: 0, failures: 0, latest: {}, rates: {}, series: {} };
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
        p = { el, canvas: el.querySelector('canvas'), a: el.querySelector('.a'), b: el.querySelector('.b'), points: [] };
        panels.set(chart.id, p);
    }
    return p;
}

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
    const max = highest > 0 ? highest * 1.15 : 1; // headroom above the highest point
    const styles = getComputedStyle(document.body);
    const at = (i) => width - (p.points.length - 1 - i) * (width / (KEEP - 1)); // newest at the right edge
    for (const [index, color] of [[0, styles.getPropertyValue('--accent')], [1, styles.getPropertyValue('--second')]]) {
        g.strokeStyle = g.fillStyle = color.trim() || '#5aa9ff';
        g.lineWidth = 1.5;
        g.beginPath();
        p.points.forEach((point, i) => {
            const v = point[index];
            if (v === null || v === undefined) return;
            const y = height - (v / max) * (height - 4) - 2;
            const before = p.points[i - 1]?.[index];
            if (before === null || before === undefined) g.moveTo(at(i), y); else g.lineTo(at(i), y);
            const after = p.points[i + 1]?.[index];
            if (after === null || after === undefined) g.fillRect(at(i) - 1.5, y - 1.5, 3, 3); // a dot ends each run, so a lone point shows too
        });
        g.stroke();
    }
    g.fillStyle = styles.getPropertyValue('--dim').trim() || '#56627a';
    g.font = '10px ' + (styles.getPropertyValue('--mono').trim() || 'monospace');
    g.textBaseline = 'top';
    g.fillText(`max ${format(highest)}${p.unit ? ' ' + p.unit : ''}`, 0, 0);
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
        p.points.push([null, null]);
        if (p.points.length > KEEP) p.points.shift();
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
        p.points.push([a, b]);
        if (p.points.length > KEEP) p.points.shift();
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
    document.body.dataset.ready = 'true';
}

scrape();
setInterval(scrape, PERIOD_MS);

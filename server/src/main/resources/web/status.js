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
    { id: 'cluster', title: 'cluster view · replication lag', optional: 'ringcast_cluster_view_size',
      value: (m) => m.get('ringcast_cluster_view_size'), second: (m) => m.get('ringcast_cluster_replication_lag_updates') },
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
        if (match) buckets.push({ le: Number(match[1]), count: value - (prev.get(key) ?? 0) });
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
    let max = 0;
    for (const [a, b] of p.points) max = Math.max(max, a ?? 0, b ?? 0);
    max = max > 0 ? max * 1.15 : 1;
    const styles = getComputedStyle(document.body);
    for (const [index, color] of [[0, styles.getPropertyValue('--accent')], [1, styles.getPropertyValue('--second')]]) {
        g.beginPath();
        g.strokeStyle = color.trim() || '#5aa9ff';
        g.lineWidth = 1.5;
        let started = false;
        p.points.forEach((point, i) => {
            const v = point[index];
            if (v === null || v === undefined) { started = false; return; }
            const x = width - (p.points.length - 1 - i) * (width / (KEEP - 1));
            const y = height - (v / max) * (height - 4) - 2;
            if (started) g.lineTo(x, y); else g.moveTo(x, y);
            started = true;
        });
        g.stroke();
    }
}

let previous = null;
let previousAt = 0;

async function scrape() {
    const badge = document.getElementById('scrape');
    try {
        const response = await fetch('/metrics', { cache: 'no-store' });
        if (!response.ok) throw new Error(`/metrics answered ${response.status}`);
        const metrics = parseMetrics(await response.text());
        const now = performance.now();
        const seconds = previous ? (now - previousAt) / 1000 : 0;
        for (const chart of CHARTS) {
            if (chart.optional && !metrics.has(chart.optional)) continue;
            const a = chart.value(metrics, previous, seconds) ?? null;
            const b = chart.second ? chart.second(metrics, previous, seconds) ?? null : undefined;
            const p = panel(chart);
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
        badge.textContent = `live · ${new Date().toLocaleTimeString()}`;
        badge.className = 'badge up';
        document.body.dataset.ready = 'true';
    } catch (e) {
        state.failures++;
        badge.textContent = `cannot read /metrics: ${e.message}`;
        badge.className = 'badge down';
        previous = null; // a restarted node's counters start again: no rate across the gap
    }
}

scrape();
setInterval(scrape, PERIOD_MS);

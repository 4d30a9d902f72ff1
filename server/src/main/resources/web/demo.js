// Ringcast live demo: a market-data board fed by the server's demo publisher.
// Updates are stored per topic as they arrive and painted once per animation frame,
// so thousands of updates per second cost one DOM write per changed cell per frame.
// The board can be throttled (a view with maxRate and fields), and a second subscription, filtered
// by the server, lists the pairs whose spread is under a bound (docs/browser-client.md, "Views").
import { connect, UpdateKind } from '/js/ringcast.js';

const params = new URLSearchParams(location.search);
const WS_URL = params.get('url')
  || (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/ws';
const DEFAULT_SELECTOR = params.get('selector') || 'demo/fx/#';
const RETRY_MS = 3000;          // pause between connect() calls while the server is unreachable
const CONNECT_TIMEOUT_MS = 4000; // how long one connect() keeps trying before it rejects
const LATENCY_WINDOW_MS = 5000;
const OTHER_MAX = 60;
const TEXT_MAX = 120;
const MAX_RATES = [1, 4, 10];   // the board's throttle choices, values a second per pair
// What a throttled board asks for: the board needs no more, and without ts a value whose prices
// did not move is not sent at all. (So a throttled board has no latency figure.)
const BOARD_VIEW_FIELDS = ['bid', 'ask', 'spread'];
const SPARK_POINTS = 48;        // mids a sparkline shows, the newest at the right
// A sparkline is redrawn at most this often: a pair quoting 4 times a second costs half the
// redraws, and the mids skipped go into the next drawing, with the pair's next quote.
const SPARK_REDRAW_MS = 400;
const SPARK_HEIGHT = 20;        // viewBox units; the SVG stretches to its box
const SVG_NS = 'http://www.w3.org/2000/svg';
const DEFAULT_SPREAD_BOUND = '0.0002';
const TIGHT_FIELDS = ['spread'];
const TIGHT_MAX_RATE = 2;       // the panel lists names: two values a second per pair is plenty

const $ = (id) => document.getElementById(id);
const el = {
  state: $('state'), stateDetail: $('state-detail'),
  rate: $('rate'), p50: $('latency-p50'), p99: $('latency-p99'),
  received: $('received'), topics: $('topics'), gaps: $('gaps'), reconnects: $('reconnects'),
  board: $('board'), other: $('other'), error: $('error'), rateNote: $('rate-note'),
  selector: $('selector'), subscribeForm: $('subscribe-form'), subscribeStatus: $('subscribe-status'),
  maxRate: $('max-rate'),
  tightForm: $('tight-form'), tightBound: $('tight-bound'), tightFilter: $('tight-filter'),
  tightStatus: $('tight-status'), tightList: $('tight-list'),
  publishForm: $('publish-form'), publishTopic: $('publish-topic'), publishValue: $('publish-value'),
  publishButton: $('publish'), publishResult: $('publish-result'),
};

// Live statistics; exposed as window.ringcastDemo.stats for automated tests.
const stats = {
  received: 0,
  gaps: 0,
  reconnects: 0,
  lastLatencyMs: null,
  perTopic: new Map(),   // topic -> last sequence seen on the current subscription
  outOfOrder: 0,         // 'update' whose sequence is not last + 1 for its topic (through a view: not above it)
  other: 0,              // values that are not demo quotes
  conflated: 0,          // 'conflated' values: the newest, sent when maxRate allowed (or after a slow spell)
  rewound: 0,            // snapshots of a pair after its first: the history its board subscription rewound
  tightUpdates: 0,       // values through the spread filter
  tightUnmatched: 0,     // pairs that stopped passing it
};

let client = null;       // the connected client, once there is one
let sub = null;          // the current subscription
let subGen = 0;          // bumps on every (re)subscribe; stale callbacks are ignored
let selector = DEFAULT_SELECTOR;
let everConnected = false;
// The board's maxRate, 0 for every update (a plain subscription)
let boardMaxRate = MAX_RATES.includes(Number(params.get('maxRate'))) ? Number(params.get('maxRate')) : 0;

el.selector.value = selector;
el.maxRate.value = boardMaxRate ? String(boardMaxRate) : '';

// ---------------------------------------------------------------- errors

function showError(msg) {
  if (!msg) { el.error.hidden = true; el.error.textContent = ''; return; }
  el.error.textContent = msg;
  el.error.hidden = false;
}
function errText(err) {
  if (err == null) return 'unknown error';
  if (typeof err === 'string') return err;
  const msg = err.message || String(err);
  const code = err.code != null && err.code !== '' && !msg.includes(String(err.code)) ? `${err.code}: ` : '';
  return code + msg;
}
window.addEventListener('error', (e) => showError('page error: ' + (e.message || e.error)));
window.addEventListener('unhandledrejection', (e) => showError('unhandled: ' + errText(e.reason)));

// ---------------------------------------------------------------- connection state

function renderState(state, info = {}) {
  document.body.dataset.state = state;
  el.state.textContent = state;
  el.state.className = 'badge ' + state;
  let detail = '';
  if (state === 'connected') {
    detail = `session ${info.sessionId ?? '?'} · ${info.url ?? WS_URL}`;
  } else if (state === 'reconnecting' || state === 'connecting') {
    detail = info.reason ? `${info.reason}` : (info.url ?? WS_URL);
  } else if (state === 'closed') {
    detail = info.reason ? `closed: ${info.reason}` : 'closed';
  }
  el.stateDetail.textContent = detail;
  el.stateDetail.title = detail;
}

function reasonOf(e) {
  if (!e) return '';
  const parts = [];
  if (e.reason) parts.push(String(e.reason));
  if (e.closeCode && !String(e.reason || '').includes(String(e.closeCode))) parts.push(`close code ${e.closeCode}`);
  return parts.join(', ');
}

let lastReason = '';
let attempt = 0;

function onState(e, myAttempt) {
  if (myAttempt !== attempt) return;           // events from an abandoned client
  if (e.reason || e.closeCode) lastReason = reasonOf(e);
  if (e.state === 'connected') {
    if (everConnected) { stats.reconnects++; }
    everConnected = true;
    renderState('connected', { sessionId: e.sessionId ?? client?.sessionId, url: e.url ?? WS_URL });
  } else if (e.state === 'reconnecting') {
    renderState('reconnecting', { reason: lastReason ? `last disconnect: ${lastReason}` : 'connection lost', url: e.url });
  } else if (e.state === 'connecting') {
    renderState('connecting', { url: e.url });
  } else if (e.state === 'closed') {
    if (client) {
      // The client gave up (or was closed by the server): start over after a pause.
      renderState('closed', { reason: lastReason });
      const dead = client;
      client = null;
      attempt++;
      try { dead.close(); } catch { /* already closed */ }
      setTimeout(startConnecting, RETRY_MS);
    }
  }
}

async function startConnecting() {
  const myAttempt = ++attempt;
  let failures = 0;
  renderState('connecting', { url: WS_URL });
  for (;;) {
    try {
      const c = await connect(WS_URL, {
        clientName: 'ringcast-demo',
        connectTimeoutMs: CONNECT_TIMEOUT_MS,
        onStateChange: (e) => onState(e, myAttempt),
      });
      if (myAttempt !== attempt) { try { c.close(); } catch { /* ignore */ } return; }
      client = c;
      window.ringcastDemo = { client: c, stats };
      // connect() resolves once the session is established: render it even if the
      // 'connected' event was delivered before we knew the client.
      if (!everConnected) everConnected = true;
      renderState(c.state || 'connected', { sessionId: c.sessionId, url: c.url || WS_URL });
      subscribe(selector);
      subscribeTight();
      return;
    } catch (err) {
      if (myAttempt !== attempt) return;
      failures++;
      const why = errText(err);
      renderState('connecting', {
        reason: `cannot connect to ${WS_URL} (${why}); attempt ${failures}, retrying in ${RETRY_MS / 1000} s`,
      });
      await new Promise((r) => setTimeout(r, RETRY_MS));
      if (myAttempt !== attempt) return;
    }
  }
}

// ---------------------------------------------------------------- board model

// topic -> { topic, bid, ask, prevBid, decimals, seq, stale, spark (its last mids), cell refs }
const rows = new Map();
const dirty = new Set();     // topics whose cell must be repainted next frame
let newRows = false;         // cells to create (and the board to re-sort) next frame
let frameRequested = false;

const otherQueue = [];       // entries for the "other topics" log not yet painted

function requestFrame() {
  if (!frameRequested) {
    frameRequested = true;
    requestAnimationFrame(paint);
  }
}

function isQuote(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
    && typeof v.bid === 'number' && Number.isFinite(v.bid)
    && typeof v.ask === 'number' && Number.isFinite(v.ask);
}

// Decimals to show for a topic: as many as the publisher sends (JSON drops trailing zeros,
// so the most seen so far), but no more than about six significant digits, like a dealing
// screen: 1.08421, 151.234, 1352.45.
function maxDecimals(price) {
  const p = Math.abs(price);
  if (!(p > 0)) return 5;
  return Math.min(10, Math.max(1, 5 - Math.floor(Math.log10(p))));
}
function decimalsIn(x) {
  const s = String(x);
  if (s.includes('e')) return 10;
  const dot = s.indexOf('.');
  return dot < 0 ? 0 : s.length - dot - 1;
}
function decimalsFor(row, bid, ask) {
  const seen = Math.max(row ? row.seenDecimals : 0, decimalsIn(bid), decimalsIn(ask));
  if (row) row.seenDecimals = seen;
  return Math.max(1, Math.min(seen, maxDecimals(bid)));
}

function safeText(update) {
  try {
    const t = update.text();
    return t.length > TEXT_MAX ? t.slice(0, TEXT_MAX) + '…' : t;
  } catch {
    const n = update.value ? update.value.length : 0;
    return `(${n} bytes, not text)`;
  }
}

function parseValue(update) {
  const v = update.value;
  if (!v || v.length === 0) return undefined;
  // Cheap test before parsing: demo quotes are JSON objects.
  if (v[0] !== 0x7b /* { */) return undefined;
  try { return update.json(); } catch { return undefined; }
}

// ---------------------------------------------------------------- latency and rate

const LAT_CAP = 32768;
const latT = new Float64Array(LAT_CAP);
const latV = new Float64Array(LAT_CAP);
let latHead = 0;     // next write index
let latCount = 0;
let latTotal = 0;    // samples recorded since the page loaded: a cursor for ringcastDemoStats

function recordLatency(now, ms) {
  latT[latHead] = now;
  latV[latHead] = ms;
  latHead = (latHead + 1) % LAT_CAP;
  if (latCount < LAT_CAP) latCount++;
  latTotal++;
  stats.lastLatencyMs = ms;
}

function latencyPercentiles(now) {
  const from = now - LATENCY_WINDOW_MS;
  const buf = [];
  for (let i = 0, idx = (latHead - 1 + LAT_CAP) % LAT_CAP; i < latCount; i++, idx = (idx - 1 + LAT_CAP) % LAT_CAP) {
    if (latT[idx] < from) break;
    buf.push(latV[idx]);
  }
  if (buf.length === 0) return null;
  const a = Float64Array.from(buf).sort();
  const q = (p) => a[Math.min(a.length - 1, Math.max(0, Math.ceil(p * a.length) - 1))];
  return { p50: q(0.5), p99: q(0.99), n: a.length };
}

// Read-only view of the figures for benchmarks (scripts/bench-demo-page.sh); changes nothing on
// the page. Returns the counters, the page's clock and latencyTotal, the latency samples recorded
// so far; with `from` (an earlier latencyTotal) also latencyMs, the end-to-end latencies (ms) of
// the samples recorded since, oldest first, as many as the ring still holds (latencyMissed: the
// ones it no longer does).
window.ringcastDemoStats = (from) => {
  const out = {
    now: performance.now(),
    received: stats.received, gaps: stats.gaps, reconnects: stats.reconnects,
    outOfOrder: stats.outOfOrder, topics: rows.size, latencyTotal: latTotal,
  };
  if (typeof from === 'number') {
    const wanted = Math.max(0, latTotal - from);
    const held = Math.min(wanted, latCount);
    const ms = new Array(held);
    for (let i = 0, idx = (latHead - held + LAT_CAP) % LAT_CAP; i < held; i++, idx = (idx + 1) % LAT_CAP) ms[i] = latV[idx];
    out.latencyMs = ms;
    out.latencyMissed = wanted - held;
  }
  return out;
};

const rateHistory = [];   // [time, received]

function fmtMs(ms) {
  if (ms == null || !Number.isFinite(ms)) return '–';
  const a = Math.abs(ms);
  return a < 10 ? ms.toFixed(1) : Math.round(ms).toString();
}

function renderMetrics() {
  const now = performance.now();
  rateHistory.push([now, stats.received]);
  while (rateHistory.length > 1 && now - rateHistory[0][0] > 1000) rateHistory.shift();
  const [t0, r0] = rateHistory[0];
  const dt = now - t0;
  const rate = dt > 0 ? Math.round((stats.received - r0) * 1000 / dt) : 0;
  el.rate.textContent = String(rate);

  const lat = latencyPercentiles(Date.now());
  el.p50.textContent = lat ? fmtMs(lat.p50) : '–';
  el.p99.textContent = lat ? fmtMs(lat.p99) : '–';
  el.p50.parentElement.title = lat ? `${lat.n} samples in the last 5 s`
    : boardMaxRate ? 'a throttled board asks for bid, ask and spread only: no ts, no latency' : 'no samples in the last 5 s';

  el.received.textContent = stats.received.toLocaleString('en-US');
  el.gaps.textContent = stats.gaps.toLocaleString('en-US');
  el.reconnects.textContent = String(stats.reconnects);
  el.topics.textContent = String(rows.size);
}
setInterval(renderMetrics, 250);

// ---------------------------------------------------------------- updates

function onUpdate(update, gen) {
  if (gen !== subGen) return;           // belongs to a closed subscription
  const now = Date.now();
  stats.received++;
  const { topic, sequence, kind } = update;

  if (kind === UpdateKind.SNAPSHOT_AFTER_GAP || kind === UpdateKind.GAP_WITHOUT_VALUE) stats.gaps++;
  if (kind === UpdateKind.CONFLATED) stats.conflated++;
  if (kind === UpdateKind.SNAPSHOT && rows.has(topic)) stats.rewound++; // a pair's second snapshot on: its history
  const last = stats.perTopic.get(topic);
  if (boardMaxRate) {
    // through a view sequences jump on purpose (held back, unchanged projections): only going back is disorder
    if (last !== undefined && (kind === UpdateKind.UPDATE || kind === UpdateKind.CONFLATED) && sequence <= last) {
      stats.outOfOrder++;
    }
  } else if (kind === UpdateKind.UPDATE && last !== undefined && sequence !== last + 1) {
    stats.outOfOrder++;
  }
  if (typeof sequence === 'number') stats.perTopic.set(topic, sequence);

  if (kind === UpdateKind.GAP_WITHOUT_VALUE) {
    const row = rows.get(topic);
    if (row) { row.stale = true; row.seq = sequence; dirty.add(topic); requestFrame(); }
    else pushOther(topic, sequence, kind, '(no value)');
    return;
  }

  const v = parseValue(update);
  if (!isQuote(v)) {
    pushOther(topic, sequence, kind, safeText(update));
    return;
  }

  if (typeof v.ts === 'number' && (kind === UpdateKind.UPDATE || kind === UpdateKind.CONFLATED)) {
    recordLatency(now, now - v.ts);
  }

  let row = rows.get(topic);
  if (!row) {
    row = { topic, bid: v.bid, ask: v.ask, prevBid: v.bid, decimals: 0, seenDecimals: 0, seq: sequence,
      stale: false, cell: null, flashPending: false, dir: 0,
      spark: new Float64Array(SPARK_POINTS), sparkLen: 0, sparkPushes: 0, sparkShown: 0, sparkDrawnAt: -Infinity };
    row.decimals = decimalsFor(row, v.bid, v.ask);
    rows.set(topic, row);
    newRows = true;
    pushSpark(row, (v.bid + v.ask) / 2);
  } else {
    pushSpark(row, (v.bid + v.ask) / 2);
    row.prevBid = row.bid;
    row.bid = v.bid;
    row.ask = v.ask;
    row.seq = sequence;
    row.stale = false;
    row.decimals = decimalsFor(row, v.bid, v.ask);
    if (row.bid !== row.prevBid) {
      row.dir = row.bid > row.prevBid ? 1 : -1;
      row.flashPending = true;
      row.neutral = false;
    } else if (!row.flashPending) {
      row.flashPending = true;   // bid unchanged (only the ask moved): a neutral flash
      row.neutral = true;
    }
  }
  dirty.add(topic);
  requestFrame();
}

// The sparkline is drawn from the mids the page receives: the rewound ones first (the board
// subscribes with rewind: SPARK_POINTS), then the live ones.
function pushSpark(row, mid) {
  row.spark[row.sparkPushes % SPARK_POINTS] = mid;
  row.sparkPushes++;
  row.sparkLen = Math.min(SPARK_POINTS, row.sparkLen + 1);
}

function pushOther(topic, sequence, kind, text) {
  stats.other++;
  otherQueue.push({ topic, sequence, kind, text, at: new Date() });
  if (otherQueue.length > OTHER_MAX) otherQueue.splice(0, otherQueue.length - OTHER_MAX);
  requestFrame();
}

// ---------------------------------------------------------------- painting

function label(topic) {
  const i = topic.lastIndexOf('/');
  return i >= 0 && i < topic.length - 1 ? topic.slice(i + 1) : topic;
}

// A cell, dealing-screen style:   EURUSD          1.2   <- pair, spread in pips
//                                  1.08 42¹      43³   <- big figure, bid pips, ask pips
// The ask shows its own big figure only when it differs from the bid's.
function createCell(row) {
  const cell = document.createElement('div');
  cell.className = 'cell';
  cell.dataset.topic = row.topic;
  cell.title = row.topic;
  const span = (cls, text = '') => {
    const e = document.createElement('span');
    e.className = cls;
    if (text) e.textContent = text;
    return e;
  };
  const glow = span('glow');
  // behind the prices, as the glow is: no room taken from the text
  const spark = document.createElementNS(SVG_NS, 'svg');
  spark.setAttribute('class', 'spark');
  spark.setAttribute('viewBox', `0 0 100 ${SPARK_HEIGHT}`);
  spark.setAttribute('preserveAspectRatio', 'none');
  spark.setAttribute('aria-hidden', 'true');
  const sparkLine = document.createElementNS(SVG_NS, 'polyline');
  spark.append(sparkLine);
  const name = span('pair', label(row.topic));
  const spread = span('spread');
  const fig = span('fig');
  const bid = span('px bid');
  const ask = span('px ask');
  for (const px of [bid, ask]) px.append(span('lo'), span('hi'), span('pip'));
  const line1 = document.createElement('div');
  line1.className = 'l1';
  line1.append(name, spread);
  const line2 = document.createElement('div');
  line2.className = 'l2';
  line2.append(fig, bid, ask);
  cell.append(glow, spark, line1, line2);
  row.cell = cell;
  row.glowEl = glow;
  row.sparkEl = sparkLine;
  row.spreadEl = spread;
  row.figEl = fig;
  row.bidEl = bid;
  row.askEl = ask;
  return cell;
}

// The row's mids as a polyline, scaled to their own range, the newest at the right edge.
function paintSpark(row, now) {
  row.sparkShown = row.sparkPushes;
  row.sparkDrawnAt = now;
  const n = row.sparkLen;
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < n; i++) {
    const p = row.spark[i];
    if (p < min) min = p;
    if (p > max) max = p;
  }
  const range = max - min;
  const step = 100 / (SPARK_POINTS - 1);
  let points = '';
  for (let i = 0; i < n; i++) {
    const p = row.spark[(row.sparkPushes - n + i) % SPARK_POINTS];
    const x = (SPARK_POINTS - n + i) * step;
    const y = range > 0 ? SPARK_HEIGHT - 1 - ((p - min) / range) * (SPARK_HEIGHT - 2) : SPARK_HEIGHT / 2;
    points += `${x.toFixed(1)},${y.toFixed(1)} `;
  }
  row.sparkEl.setAttribute('points', points);
}

// "1.08421" -> ["1.08", "42", "1"]: big figure, pips, fractional pip.
function splitPrice(price, decimals) {
  const s = price.toFixed(decimals);
  const cut = s.length - 1;
  let big = cut;
  for (let digits = 0; big > 0 && digits < 2;) {
    big--;
    if (s[big] !== '.') digits++;
  }
  return [s.slice(0, big), s.slice(big, cut), s.slice(cut)];
}

function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

function setParts(node, lo, hi, pip) {
  const k = node.childNodes;
  setText(k[0], lo);
  setText(k[1], hi);
  setText(k[2], pip);
}

function paintPrices(row) {
  const b = splitPrice(row.bid, row.decimals);
  const a = splitPrice(row.ask, row.decimals);
  setText(row.figEl, b[0]);
  const long = b[0].length + (a[0] === b[0] ? 0 : a[0].length) > 6;
  if (row.long !== long) { row.long = long; row.cell.classList.toggle('long', long); }
  setParts(row.bidEl, '', b[1], b[2]);
  setParts(row.askEl, a[0] === b[0] ? '' : a[0], a[1], a[2]);
  const pips = (row.ask - row.bid) * Math.pow(10, Math.max(0, row.decimals - 1));
  setText(row.spreadEl, Number.isFinite(pips) ? pips.toFixed(1) : '');
}

// A change flashes the cell: an overlay behind the text fades from the flash colour to
// transparent. Background-colour keyframes measured cheaper than opacity ones here: opacity
// makes the browser promote hundreds of overlays to layers while the board is busy.
// Colours come from the stylesheet, read on first use (when it has certainly been applied).
let FLASH = null;
function flashFrames() {
  if (!FLASH) {
    const rootStyle = getComputedStyle(document.documentElement);
    const cssVar = (name, fallback) => (rootStyle.getPropertyValue(name) || '').trim() || fallback;
    const clear = 'rgba(0, 0, 0, 0)';
    FLASH = {
      up: [{ backgroundColor: cssVar('--flash-up', '#1d6b47') }, { backgroundColor: clear }],
      down: [{ backgroundColor: cssVar('--flash-down', '#7a2630') }, { backgroundColor: clear }],
      flat: [{ backgroundColor: cssVar('--flash-flat', '#26344f') }, { backgroundColor: clear }],
    };
  }
  return FLASH;
}
const FLASH_OPTS = { duration: 500, easing: 'ease-out' };
// No flashing for people who asked their system for reduced motion, or with ?flash=0.
const flashOff = params.get('flash') === '0'
  || (typeof matchMedia === 'function' && matchMedia('(prefers-reduced-motion: reduce)').matches);
const canAnimate = typeof Element !== 'undefined' && typeof Element.prototype.animate === 'function';

function flash(row, which) {
  if (flashOff) return;
  const glow = row.glowEl;
  if (canAnimate) {
    try {
      if (row.anim) row.anim.cancel();
      row.anim = glow.animate(flashFrames()[which], FLASH_OPTS);
      return;
    } catch { /* fall through to the CSS animation */ }
  }
  glow.className = 'glow';
  void glow.offsetWidth; // restart the CSS animation
  glow.className = 'glow fade-' + which;
}

// Cells repainted per frame adapt to the machine (additive increase, multiplicative decrease on
// slow frames): on a slow machine cells update a little less often instead of the page falling
// behind the socket. Cells not painted this frame stay dirty, oldest first, for the next one.
let cellBudget = 200;
const FLASH_MIN_BUDGET = 60;
let lastFrameAt = 0;      // timestamp of the previous frame that did work, 0 if it did none

function paint(now) {
  frameRequested = false;
  if (lastFrameAt > 0) {
    const dt = now - lastFrameAt;
    if (dt > 45) cellBudget = Math.max(25, Math.floor(cellBudget * 0.7));
    else if (dt < 25) cellBudget = Math.min(1000, cellBudget + 20);
  }
  lastFrameAt = now;
  try {
    if (newRows) {
      newRows = false;
      const placeholder = el.board.querySelector('.board-empty');
      if (placeholder) placeholder.remove();
      for (const row of rows.values()) if (!row.cell) createCell(row);
      const sorted = [...rows.values()].sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0));
      const frag = document.createDocumentFragment();
      for (const row of sorted) frag.appendChild(row.cell);
      el.board.appendChild(frag);
    }
    let painted = 0;
    for (const topic of dirty) {
      if (painted >= cellBudget) break;
      painted++;
      dirty.delete(topic);
      const row = rows.get(topic);
      if (!row || !row.cell) continue;
      paintPrices(row);
      if (row.sparkShown !== row.sparkPushes && now - row.sparkDrawnAt >= SPARK_REDRAW_MS) paintSpark(row, now);
      if (row.shownDir !== row.dir || row.shownStale !== row.stale) {
        row.shownDir = row.dir;
        row.shownStale = row.stale;
        const cl = row.cell.classList;
        cl.toggle('up', row.dir > 0);
        cl.toggle('down', row.dir < 0);
        cl.toggle('stale', row.stale);
      }
      if (row.flashPending) {
        row.flashPending = false;
        // On a machine that cannot keep up (budget cut well down) the flashes go first.
        if (cellBudget >= FLASH_MIN_BUDGET) {
          if (row.neutral) flash(row, 'flat');
          else flash(row, row.dir > 0 ? 'up' : 'down');
        }
        row.neutral = false;
      }
    }
    paintTight();
    paintOther();
    if (dirty.size > 0) requestFrame(); else lastFrameAt = 0;
  } catch (err) {
    dirty.clear();
    showError('render error: ' + errText(err));
  }
}

function paintOther() {
  if (otherQueue.length === 0) return;
  const frag = document.createDocumentFragment();
  for (const e of otherQueue) {
    const li = document.createElement('li');
    const head = document.createElement('div');
    head.className = 'other-head';
    const t = document.createElement('span');
    t.className = 'other-topic';
    t.textContent = e.topic;
    const meta = document.createElement('span');
    meta.className = 'other-meta';
    meta.textContent = `#${e.sequence} · ${e.kind}`;
    head.append(t, meta);
    const body = document.createElement('div');
    body.className = 'other-text';
    body.textContent = e.text;
    li.append(head, body);
    frag.prepend(li);   // newest first
  }
  otherQueue.length = 0;
  el.other.prepend(frag);
  while (el.other.childElementCount > OTHER_MAX) el.other.lastElementChild.remove();
}

function clearBoard() {
  for (const row of rows.values()) if (row.anim) { try { row.anim.cancel(); } catch { /* ignore */ } }
  rows.clear();
  dirty.clear();
  newRows = false;
  stats.perTopic.clear();
  el.board.textContent = '';
  const ph = document.createElement('div');
  ph.className = 'board-empty';
  ph.textContent = 'waiting for data…';
  el.board.appendChild(ph);
  el.topics.textContent = '0';
}

// ---------------------------------------------------------------- subscribe

function setSubscribeStatus(text, cls = '') {
  el.subscribeStatus.textContent = text;
  el.subscribeStatus.className = 'status ' + cls;
}

function subscribe(sel) {
  selector = sel;
  const gen = ++subGen;
  if (sub) {
    try { sub.close(); } catch (err) { /* already closed */ }
    sub = null;
  }
  clearBoard();
  showError('');
  if (!client) {
    setSubscribeStatus(`will subscribe to ${sel} once connected`);
    return;
  }
  const options = {
    // each pair starts with its last SPARK_POINTS values from the server's history (as snapshots,
    // oldest first), so its sparkline is drawn the moment the page opens
    rewind: SPARK_POINTS,
    onError: (err) => {
      if (gen !== subGen) return;
      showError(`subscription ${sel}: ${errText(err)}`);
      setSubscribeStatus(`error: ${errText(err)}`, 'err');
    },
  };
  // A throttled board is a view: the server sends each pair at most maxRate values a second, the
  // newest (flagged conflated when it held it back), projected to the fields the board draws.
  if (boardMaxRate) Object.assign(options, { maxRate: boardMaxRate, fields: BOARD_VIEW_FIELDS });
  const how = boardMaxRate ? ` · at most ${boardMaxRate}/s per pair, fields ${BOARD_VIEW_FIELDS.join(', ')}` : '';
  el.rateNote.textContent = boardMaxRate ? `at most ${boardMaxRate}/s per pair` : 'every update';
  let s;
  try {
    s = client.subscribe(sel, (u) => onUpdate(u, gen), options);
  } catch (err) {
    showError(`bad selector "${sel}": ${errText(err)}`);
    setSubscribeStatus(`bad selector: ${err && err.message ? err.message : errText(err)}`, 'err');
    return;
  }
  sub = s;
  setSubscribeStatus(`subscribing to ${sel}${how}…`);
  Promise.resolve(s.confirmed).then(
    (count) => {
      if (gen !== subGen) return;
      const n = typeof count === 'number' ? `${count} topic${count === 1 ? '' : 's'} matched` : 'confirmed';
      setSubscribeStatus(`subscribed to ${sel}: ${n}${how}`, 'ok');
    },
    (err) => {
      if (gen !== subGen) return;
      showError(`subscription ${sel} refused: ${errText(err)}`);
      setSubscribeStatus(`refused: ${errText(err)}`, 'err');
      if (sub === s) sub = null;
    },
  );
  setParam('selector', sel, 'demo/fx/#');
  setParam('maxRate', boardMaxRate ? String(boardMaxRate) : '', '');
}

// Keeps the page's choices in the address bar so the view can be shared or reloaded.
function setParam(name, value, byDefault) {
  try {
    const p = new URLSearchParams(location.search);
    if (value === byDefault) p.delete(name); else p.set(name, value);
    const q = p.toString();
    history.replaceState(null, '', location.pathname + (q ? '?' + q : '') + location.hash);
  } catch { /* not important */ }
}

el.subscribeForm.addEventListener('submit', (e) => {
  e.preventDefault();
  const sel = el.selector.value.trim();
  if (!sel) { showError('enter a selector, e.g. demo/fx/#'); return; }
  subscribe(sel);
  subscribeTight();
});

el.maxRate.addEventListener('change', () => {
  boardMaxRate = Number(el.maxRate.value) || 0;
  subscribe(selector);
});

// ---------------------------------------------------------------- spread filter panel

// A second subscription on the board's selector, filtered by the server: only the pairs whose
// spread is under the bound come, and onUnmatched says when one no longer is. Every page with the
// same bound shares one view there, evaluated once per update. It asks for the spread alone, at
// most TIGHT_MAX_RATE a second per pair: a list of names needs no more than that.
let tightBound = params.has('spread') ? params.get('spread').trim() : DEFAULT_SPREAD_BOUND;
let tightSub = null;
let tightGen = 0;        // bumps on every (re)subscribe of the panel; stale callbacks are ignored
const tightRows = new Map();   // topic -> { topic, spread, sequence, passing, leftAt, el }
const tightDirty = new Set();
let tightNewRows = false;
let tightPassing = 0;

el.tightBound.value = tightBound;

function setTightStatus(text, cls = '') {
  el.tightStatus.textContent = text;
  el.tightStatus.className = 'status ' + cls;
}

function clearTight() {
  tightRows.clear();
  tightDirty.clear();
  tightNewRows = false;
  tightPassing = 0;
  el.tightList.textContent = '';
}

function subscribeTight() {
  const gen = ++tightGen;
  if (tightSub) {
    try { tightSub.close(); } catch { /* already closed */ }
    tightSub = null;
  }
  clearTight();
  setParam('spread', tightBound, DEFAULT_SPREAD_BOUND);
  const filter = `spread < ${tightBound}`;
  el.tightFilter.textContent = tightBound ? filter : 'off';
  if (!tightBound) { setTightStatus('off: enter a bound to list the pairs whose spread is under it'); return; }
  if (!client) { setTightStatus(`will filter ${selector} once connected`); return; }
  let s;
  try {
    s = client.subscribe(selector, (u) => onTightUpdate(u, gen), {
      filter,
      fields: TIGHT_FIELDS,
      maxRate: TIGHT_MAX_RATE,
      onUnmatched: (topic, sequence) => onTightUnmatched(topic, sequence, gen),
      onError: (err) => { if (gen === tightGen) setTightStatus(`error: ${errText(err)}`, 'err'); },
    });
  } catch (err) {
    setTightStatus(`refused: ${errText(err)}`, 'err'); // the client's own checks, e.g. a filter too long
    return;
  }
  tightSub = s;
  setTightStatus(`filtering ${selector}…`);
  s.confirmed.then(
    () => { if (gen === tightGen) renderTightStatus(); },
    (err) => {
      if (gen !== tightGen) return;
      // the server's reason, e.g. INVALID_OPTIONS: filter: bad number '2x' at column 10
      setTightStatus(`refused: ${errText(err)}`, 'err');
      if (tightSub === s) tightSub = null;
    },
  );
}

function tightRow(topic) {
  let r = tightRows.get(topic);
  if (!r) {
    r = { topic, spread: null, sequence: 0, passing: false, leftAt: null, el: null };
    tightRows.set(topic, r);
    tightNewRows = true;
  }
  return r;
}

function onTightUpdate(update, gen) {
  if (gen !== tightGen) return;
  stats.tightUpdates++;
  const r = tightRow(update.topic);
  const v = parseValue(update);
  r.spread = v && typeof v.spread === 'number' ? v.spread : null;
  r.sequence = update.sequence;
  if (!r.passing) { r.passing = true; tightPassing++; }
  r.leftAt = null;
  tightDirty.add(update.topic);
  requestFrame();
}

// No silent disappearance: a pair that stops passing stays listed, greyed, with the time it left.
function onTightUnmatched(topic, sequence, gen) {
  if (gen !== tightGen) return;
  stats.tightUnmatched++;
  const r = tightRow(topic);
  if (r.passing) { r.passing = false; tightPassing--; }
  r.sequence = sequence;
  r.leftAt = new Date();
  tightDirty.add(topic);
  requestFrame();
}

function renderTightStatus() {
  if (!tightSub) return;
  const left = tightRows.size - tightPassing;
  setTightStatus(`${tightPassing} pair${tightPassing === 1 ? '' : 's'} pass` + (left ? ` · ${left} left` : ''), 'ok');
}

const timeOfDay = (d) => d.toLocaleTimeString('en-GB', { hour12: false });

function paintTight() {
  if (tightNewRows) {
    tightNewRows = false;
    for (const r of tightRows.values()) {
      if (r.el) continue;
      r.el = document.createElement('li');
      r.el.dataset.topic = r.topic;
      const name = document.createElement('span');
      name.className = 'name';
      name.textContent = label(r.topic);
      const when = document.createElement('span');
      when.className = 'when';
      r.el.append(name, when);
    }
    const sorted = [...tightRows.values()].sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0));
    const frag = document.createDocumentFragment();
    for (const r of sorted) frag.appendChild(r.el);
    el.tightList.appendChild(frag);
  }
  if (tightDirty.size === 0) return;
  for (const topic of tightDirty) {
    const r = tightRows.get(topic);
    if (!r || !r.el) continue;
    r.el.className = r.passing ? 'pass' : 'left';
    setText(r.el.lastChild, r.passing ? '' : timeOfDay(r.leftAt));
    r.el.title = r.passing
      ? `${r.topic}: spread ${r.spread ?? '?'} (#${r.sequence})`
      : `${r.topic} stopped passing at ${timeOfDay(r.leftAt)} (#${r.sequence})`;
  }
  tightDirty.clear();
  renderTightStatus();
}

el.tightForm.addEventListener('submit', (e) => {
  e.preventDefault();
  tightBound = el.tightBound.value.trim();
  subscribeTight();
});

// ---------------------------------------------------------------- publish

el.publishForm.addEventListener('submit', async (e) => {
  e.preventDefault();
  const topic = el.publishTopic.value.trim();
  const value = el.publishValue.value;
  const out = el.publishResult;
  if (!client) {
    out.textContent = 'not connected';
    out.className = 'status err';
    return;
  }
  out.textContent = `publishing to ${topic}…`;
  out.className = 'status';
  try {
    const seq = await client.publish(topic, value);
    out.textContent = `acknowledged: ${topic} sequence ${seq}`;
    out.className = 'status ok';
  } catch (err) {
    out.textContent = `error: ${errText(err)}`;
    out.className = 'status err';
  }
});

// ---------------------------------------------------------------- start

renderState('connecting', { url: WS_URL });
setSubscribeStatus(`will subscribe to ${selector} once connected`);
setTightStatus(tightBound ? `will filter ${selector} once connected` : 'off');
startConnecting();

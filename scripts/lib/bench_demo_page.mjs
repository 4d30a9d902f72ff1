// Used by scripts/bench-demo-page.sh, which starts the server and chromedriver and stops them.
//
//   node scripts/lib/bench_demo_page.mjs run --driver URL --driver-pid PID --server-pid PID --page URL
//        --warmup-s S --duration-s S --profile DIR --samples FILE --runs FILE [--meta KEY=TEXT | --meta-number KEY=NUMBER]...
//     One run: a headless Chromium session through chromedriver's plain HTTP WebDriver protocol
//     (Node's fetch; no package), the page opened, a warm-up, then once a second the page's figures
//     read by evaluating JavaScript in the page through the Chrome DevTools Protocol (chromedriver's
//     goog/cdp/execute, Runtime.evaluate) and the CPU ticks of the browser's processes and the
//     server read from /proc/PID/stat. Appends one JSON line to --runs, one line per second to
//     --samples, prints one line to the console.
//   node scripts/lib/bench_demo_page.mjs summary OUT
//     OUT/summary.md from OUT/runs.jsonl and OUT/machine.txt; printed too.
import fs from 'node:fs';
import path from 'node:path';

// /proc/PID/stat counts CPU time in clock ticks; `getconf CLK_TCK` is 100 on Linux.
const TICKS_PER_S = Number(process.env.CLK_TCK || 100);
const CHROMIUM_BIN = process.env.CHROMIUM_BIN || '/usr/bin/chromium';
// The switches of the browser tests (integration-tests Chromium.java); chromedriver adds
// --remote-debugging-port=0 and its own automation switches (the browser's whole command line:
// chromium-cmdline.txt beside the samples). Chromium's two crash handlers (chrome_crashpad_handler)
// leave the process tree, so they are in neither the CPU figures nor the script's clean-up: they
// are idle and end with the browser. (--disable-crashpad-for-testing would keep them away, but
// with it the page never loaded here: chromedriver timed out waiting for the renderer.)
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-dev-shm-usage', '--window-size=1400,1000'];
const READY_TIMEOUT_MS = 30_000;  // from the page loaded to its first update
const PAGE_LOAD_TIMEOUT_MS = 30_000;
const SCRIPT_TIMEOUT_MS = 30_000;

function parseArgs(argv) {
  const opts = { meta: {} };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '');
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`option ${argv[i]} has no value`);
    if (key === 'meta' || key === 'meta-number') {
      const eq = value.indexOf('=');
      const v = value.slice(eq + 1);
      opts.meta[value.slice(0, eq)] = key === 'meta' ? v : Number(v);
    } else {
      opts[key] = value;
    }
  }
  return opts;
}

// ------------------------------------------------------------------ WebDriver and CDP

function webDriver(base) {
  return async (method, urlPath, body) => {
    const res = await fetch(base + urlPath, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await res.json();
    const v = json.value;
    if (!res.ok || (v && v.error)) {
      throw new Error(`WebDriver ${method} ${urlPath}: ${v ? `${v.error}: ${v.message}` : res.status}`);
    }
    return v;
  };
}

/** Evaluates an expression in the page (Runtime.evaluate) and returns its value as JSON. */
async function evaluate(wd, sessionId, expression) {
  const r = await wd('POST', `/session/${sessionId}/goog/cdp/execute`,
    { cmd: 'Runtime.evaluate', params: { expression, returnByValue: true } });
  if (r.exceptionDetails) {
    const e = r.exceptionDetails;
    throw new Error(`page: ${e.exception ? e.exception.description : e.text}`);
  }
  return r.result.value;
}

// The page's figures. demo.js's window.ringcastDemoStats(from) gives the raw latency samples
// since `from`; a page without it (an older build's, e.g. BASE_JAR) still has the counters in
// window.ringcastDemo.stats, and its own figures on the page (#latency-p50/-p99: last 5 s).
const sampleExpression = (from) => `(() => {
  const text = (id) => { const e = document.getElementById(id); return e ? e.textContent : null; };
  const hook = typeof window.ringcastDemoStats === 'function';
  let s;
  if (hook) {
    s = window.ringcastDemoStats(${from === undefined ? '' : from});
  } else {
    const st = window.ringcastDemo && window.ringcastDemo.stats;
    s = st ? { now: performance.now(), received: st.received, gaps: st.gaps, reconnects: st.reconnects,
      outOfOrder: st.outOfOrder } : { now: performance.now() };
  }
  return Object.assign({ hook, href: location.href, state: document.body.dataset.state,
    pageRate: text('rate'), pageP50: text('latency-p50'), pageP99: text('latency-p99') }, s);
})()`;

// ------------------------------------------------------------------ CPU from /proc

/** { ppid, ticks: utime + stime, start: starttime } of /proc/PID/stat, or null once it is gone. */
function procStat(pid) {
  let line;
  try {
    line = fs.readFileSync(`/proc/${pid}/stat`, 'ascii');
  } catch {
    return null;
  }
  // Field 2, the command in parentheses, may hold spaces: count from the last ')'. f[0] is field 3.
  const f = line.slice(line.lastIndexOf(')') + 2).split(' ');
  return { ppid: Number(f[4 - 3]), ticks: Number(f[14 - 3]) + Number(f[15 - 3]), start: f[22 - 3] };
}

function processType(pid) {
  try {
    const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    const m = /--type=([a-z-]+)/.exec(cmd);
    return m ? m[1] : 'browser';
  } catch {
    return 'gone';
  }
}

/** The processes under `rootPid` (not itself), each { key, pid, ticks, start }. */
function descendants(rootPid) {
  const byParent = new Map();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const st = procStat(name);
    if (!st) continue;
    if (!byParent.has(st.ppid)) byParent.set(st.ppid, []);
    byParent.get(st.ppid).push({ pid: Number(name), ...st });
  }
  const out = [];
  const queue = [Number(rootPid)];
  while (queue.length > 0) {
    for (const child of byParent.get(queue.shift()) || []) {
      out.push({ key: `${child.pid}:${child.start}`, ...child });
      queue.push(child.pid);
    }
  }
  return out;
}

/**
 * CPU of the browser's processes over the measured time. Processes come and go (utility
 * processes), so each is followed by pid and start time: its ticks when the window opened (0 if
 * it started later) and the last ticks seen; a process that ends loses at most its last second.
 */
class BrowserCpu {
  constructor(driverPid) {
    this.driverPid = driverPid;
    this.procs = new Map();
  }

  sample(first) {
    for (const p of descendants(this.driverPid)) {
      let e = this.procs.get(p.key);
      if (!e) {
        e = { from: first ? p.ticks : 0, last: p.ticks, type: processType(p.pid) };
        this.procs.set(p.key, e);
      }
      e.last = p.ticks;
    }
  }

  seconds(type) {
    let ticks = 0;
    for (const e of this.procs.values()) if (!type || e.type === type) ticks += e.last - e.from;
    return ticks / TICKS_PER_S;
  }
}

// ------------------------------------------------------------------ figures

/** Nearest-rank percentile of sorted values, as the page computes its own. */
function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

function median(values) {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  return v.length === 0 ? null : percentile(v, 0.5);
}

/** A figure the page shows ("2020", "3.2", "–"), as a number or null. */
function pageNumber(text) {
  if (text == null) return null;
  const n = Number(String(text).replace(/,/g, ''));
  return Number.isFinite(n) && String(text).trim() !== '' ? n : null;
}

const round1 = (x) => (x == null ? null : Math.round(x * 10) / 10);
const round3 = (x) => (x == null ? null : Math.round(x * 1000) / 1000);

// ------------------------------------------------------------------ one run

const sleep = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

async function run(o) {
  const wd = webDriver(o.driver);
  const warmupMs = Number(o['warmup-s']) * 1000;
  const durationS = Number(o['duration-s']);
  const session = await wd('POST', '/session', {
    capabilities: {
      alwaysMatch: {
        browserName: 'chrome',
        timeouts: { pageLoad: PAGE_LOAD_TIMEOUT_MS, script: SCRIPT_TIMEOUT_MS },
        'goog:chromeOptions': { binary: CHROMIUM_BIN, args: [...CHROMIUM_ARGS, `--user-data-dir=${o.profile}`] },
      },
    },
  });
  const id = session.sessionId;
  try {
    const browser = descendants(o['driver-pid']).find((p) => processType(p.pid) === 'browser');
    if (browser) {
      const cmdline = fs.readFileSync(`/proc/${browser.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
      fs.writeFileSync(path.join(path.dirname(o.samples), 'chromium-cmdline.txt'), cmdline.join('\n') + '\n');
    }
    await wd('POST', `/session/${id}/url`, { url: o.page });
    const readyBy = Date.now() + READY_TIMEOUT_MS;
    for (;;) {
      const s = await evaluate(wd, id, sampleExpression());
      if (s.state === 'connected' && s.received > 0) break;
      if (Date.now() > readyBy) {
        throw new Error(`the page did not receive updates within ${READY_TIMEOUT_MS / 1000} s: ${JSON.stringify(s)}`);
      }
      await sleep(250); // polling the page; nothing to wait on from outside it
    }
    await sleep(warmupMs);

    const cpu = new BrowserCpu(o['driver-pid']);
    const samplesOut = fs.openSync(o.samples, 'w');
    const latencies = [];
    let missed = 0;
    let first = null;
    let last = null;
    let serverTicks0 = 0;
    let serverTicks1 = 0;
    const pageRates = [];
    const pageP50s = [];
    const pageP99s = [];
    const t0 = Date.now();
    let wall0 = 0;
    for (let i = 0; i <= durationS; i++) {
      await sleep(t0 + i * 1000 - Date.now()); // on a fixed schedule: no drift from the calls
      const s = await evaluate(wd, id, sampleExpression(last && last.hook ? last.latencyTotal : undefined));
      const wallMs = Date.now();
      cpu.sample(i === 0);
      const server = procStat(o['server-pid']);
      if (!server) throw new Error(`the server (pid ${o['server-pid']}) is gone`);
      if (i === 0) {
        first = s;
        wall0 = wallMs;
        serverTicks0 = server.ticks;
      } else {
        for (const ms of s.latencyMs || []) latencies.push(ms);
        missed += s.latencyMissed || 0;
        pageRates.push(pageNumber(s.pageRate));
        pageP50s.push(pageNumber(s.pageP50));
        pageP99s.push(pageNumber(s.pageP99));
      }
      serverTicks1 = server.ticks;
      const { latencyMs, ...rest } = s;
      fs.writeSync(samplesOut, JSON.stringify({ second: i, wallMs, ...rest,
        latencySamples: latencyMs ? latencyMs.length : undefined,
        browserCpuS: round3(cpu.seconds()), serverCpuS: round3((serverTicks1 - serverTicks0) / TICKS_PER_S) }) + '\n');
      last = s;
    }
    fs.closeSync(samplesOut);
    const wallS = (Date.now() - wall0) / 1000;

    const measuredS = (last.now - first.now) / 1000;
    const sorted = Float64Array.from(latencies).sort();
    const raw = first.hook && last.hook;
    const result = {
      ...o.meta,
      browserVersion: session.capabilities.browserVersion,
      warmupS: warmupMs / 1000,
      durationS,
      measuredS: round3(measuredS),
      updatesPerS: round1((last.received - first.received) / measuredS),
      latencySource: raw ? 'page samples' : 'page 5-s windows (median of per-second readings)',
      latencySamples: raw ? sorted.length : null,
      latencyMissed: raw ? missed : null,
      p50Ms: raw ? percentile(sorted, 0.5) : median(pageP50s),
      p99Ms: raw ? percentile(sorted, 0.99) : median(pageP99s),
      p999Ms: raw ? percentile(sorted, 0.999) : null,
      maxMs: raw ? percentile(sorted, 1) : null,
      pageRateMedian: median(pageRates),
      pageP50MedianMs: median(pageP50s),
      pageP99MedianMs: median(pageP99s),
      received: last.received - first.received,
      gaps: last.gaps - first.gaps,
      reconnects: last.reconnects - first.reconnects,
      outOfOrder: last.outOfOrder - first.outOfOrder,
      receivedTotal: last.received,
      gapsTotal: last.gaps,
      reconnectsTotal: last.reconnects,
      outOfOrderTotal: last.outOfOrder,
      topics: last.topics ?? null,
      browserCpuS: round3(cpu.seconds()),
      rendererCpuS: round3(cpu.seconds('renderer')),
      browserProcesses: cpu.procs.size,
      serverCpuS: round3((serverTicks1 - serverTicks0) / TICKS_PER_S),
      cpuWallS: round3(wallS),
    };
    fs.appendFileSync(o.runs, JSON.stringify(result) + '\n');
    const n = (x, d = 0) => (x == null ? '-' : x.toLocaleString('en-US', { maximumFractionDigits: d }));
    console.log(`round ${result.round} ${result.variant}: ${n(result.updatesPerS)} updates/s, `
      + `p50 ${n(result.p50Ms, 1)} ms, p99 ${n(result.p99Ms, 1)} ms `
      + (raw ? `(${n(result.latencySamples)} samples)` : '(page 5-s windows)')
      + `, gaps ${result.gaps}, reconnects ${result.reconnects}, `
      + `browser CPU ${n(result.browserCpuS, 1)} s, server CPU ${n(result.serverCpuS, 1)} s over ${n(wallS, 1)} s`);
  } finally {
    await wd('DELETE', `/session/${id}`).catch((e) => console.error(`closing the browser: ${e.message}`));
  }
}

// ------------------------------------------------------------------ summary

function summary(out) {
  const runs = fs.readFileSync(path.join(out, 'runs.jsonl'), 'utf8').trim().split('\n').filter(Boolean).map(JSON.parse);
  const machine = fs.existsSync(path.join(out, 'machine.txt'))
    ? fs.readFileSync(path.join(out, 'machine.txt'), 'utf8').trim().split('\n') : [];
  const f = (x, d = 0) => (x == null ? '' : x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }));
  const lines = ['# Demo page in headless Chromium', ''];
  for (const m of machine) lines.push(`- ${m}`);
  if (runs.length > 0) {
    const r = runs[0];
    lines.push(`- demo: ${r.instruments} instruments, ${r.demoUpdatesPerSecond} updates/s; Chromium ${r.browserVersion}; `
      + `warm-up ${r.warmupS} s, measured ${r.durationS} s per run`);
  }
  lines.push('', 'p50/p99: end-to-end latency (receipt minus publish time, whole ms: Date.now()) of every update '
    + 'the page recorded over the measured time; "page" columns: the medians of the page\'s own figures read '
    + 'once a second (#rate over 1 s, #latency-p50/-p99 over 5 s). CPU: seconds over the measured time; '
    + 'browser = every Chromium process (renderer: the page\'s).', '');
  lines.push('| round | jar | updates/s | p50 ms | p99 ms | p99.9 ms | max ms | samples | page updates/s | page p50 / p99 ms '
    + '| gaps | reconnects | browser CPU s | renderer CPU s | server CPU s |');
  lines.push('| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const r of runs) {
    const mark = r.latencySource === 'page samples' ? '' : ' (page)';
    lines.push(`| ${r.round} | ${r.variant} \`${r.jarSha256}\` | ${f(r.updatesPerS)} | ${f(r.p50Ms, 1)}${mark} | ${f(r.p99Ms, 1)}${mark} `
      + `| ${f(r.p999Ms, 1)} | ${f(r.maxMs, 1)} | ${f(r.latencySamples)} | ${f(r.pageRateMedian)} `
      + `| ${f(r.pageP50MedianMs, 1)} / ${f(r.pageP99MedianMs, 1)} | ${r.gaps} | ${r.reconnects} `
      + `| ${f(r.browserCpuS, 1)} | ${f(r.rendererCpuS, 1)} | ${f(r.serverCpuS, 1)} |`);
  }
  const variants = [...new Set(runs.map((r) => r.variant))];
  if (runs.length > variants.length) {
    lines.push('', 'Mean of the rounds:', '');
    lines.push('| jar | runs | updates/s | p50 ms | p99 ms | page p50 / p99 ms | gaps, all runs | reconnects, all runs '
      + '| browser CPU s | server CPU s |');
    lines.push('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
    for (const v of variants) {
      const rs = runs.filter((r) => r.variant === v);
      const mean = (k) => {
        const xs = rs.map((r) => r[k]).filter((x) => Number.isFinite(x));
        return xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length;
      };
      const sum = (k) => rs.reduce((a, r) => a + (r[k] || 0), 0);
      const mark = rs.every((r) => r.latencySource === 'page samples') ? '' : ' (page)';
      lines.push(`| ${v} \`${rs[0].jarSha256}\` | ${rs.length} | ${f(mean('updatesPerS'))} | ${f(mean('p50Ms'), 1)}${mark} `
        + `| ${f(mean('p99Ms'), 1)}${mark} | ${f(mean('pageP50MedianMs'), 1)} / ${f(mean('pageP99MedianMs'), 1)} `
        + `| ${sum('gaps')} | ${sum('reconnects')} | ${f(mean('browserCpuS'), 1)} | ${f(mean('serverCpuS'), 1)} |`);
    }
  }
  lines.push('', 'Jars:', '');
  for (const v of variants) {
    const r = runs.find((x) => x.variant === v);
    lines.push(`- ${v}: \`${r.jar}\` (sha256 \`${r.jarSha256}\`…)`);
  }
  const text = lines.join('\n') + '\n';
  fs.writeFileSync(path.join(out, 'summary.md'), text);
  process.stdout.write(text);
}

const [command, ...rest] = process.argv.slice(2);
try {
  if (command === 'run') await run(parseArgs(rest));
  else if (command === 'summary') summary(rest[0]);
  else throw new Error(`unknown command ${command}: run | summary`);
} catch (e) {
  console.error(`bench_demo_page: ${e.message}`);
  process.exit(1);
}

"""The summary table of scripts/bench-transports.sh, from the JSON files the load generator wrote.

Usage: python3 scripts/lib/bench_transports_summary.py DIR   (prints Markdown)

One row per run, in the order run; then per workload and transport the median of its rounds.
"server CPU per delivery" is the server's user + system time over the measured window and the
drain divided by the deliveries it made in that time (the generator's --server-pids figure);
"generator CPU per delivery" is the generator's over the same window; "machine busy" is the whole
machine's busy share over the generator's run (warm-up included), so
a run that other work shared stands out; "other java processes" counts those seen during the run
(sampled every 2 s), neither the server nor the generator.
"""
import glob
import json
import os
import re
import statistics
import sys


def runs(out):
    """(name, text, json) of every run, in the order run (round, then the order in the script)."""
    found = []
    for txt in glob.glob(os.path.join(out, 'r*-*ps.txt')) + glob.glob(os.path.join(out, 'r*-*ps-shared*.txt')):
        name = os.path.basename(txt)[:-len('.txt')]
        files = glob.glob(os.path.join(out, name, '*.json'))
        with open(txt) as f:
            text = f.read()
        found.append((name, text, json.load(open(files[0])) if files else None))
    return sorted(found, key=lambda r: os.path.getmtime(os.path.join(out, r[0] + '.txt')))


def busy(text):
    m = re.search(r'machine_jiffies_busy_total_before_after: (\d+) (\d+) (\d+) (\d+)', text)
    if not m:
        return None
    b0, t0, b1, t1 = map(int, m.groups())
    return 100.0 * (b1 - b0) / (t1 - t0) if t1 > t0 else None


def others(text):
    m = re.search(r'other_java_processes_during_run: *(.*)', text)
    return len(m.group(1).split()) if m else None


def row(name, text, r):
    m = re.match(r'r(\d+)-(server|client)-([a-z_]+)-(\d+)s-(\d+)ps(-shared\d+)?$', name)
    rnd, side, transport, subscribers, rate = m.group(1), m.group(2), m.group(3), int(m.group(4)), int(m.group(5))
    health = re.search(r'"transport":"([a-z_]+)"', text)
    if r is None:
        return dict(round=rnd, side=side, transport=transport, subscribers=subscribers, rate=rate, failed=True)
    lat, cor, cpu, scpu = r['latencyMs'], r['correctness'], r['cpu'], r.get('serverCpu') or {}
    per_delivery_us = 1e6 / scpu['deliveriesPerCoreSecond'] if scpu.get('known') and scpu.get(
        'deliveriesPerCoreSecond') else None
    # the generator's CPU over the same window as the server's (measured window and drain), per delivery in it
    wire = r.get('wire') or {}
    window_deliveries = wire['deliveries'] if wire.get('known') else r['deliveries']['measured']
    gen_us = 1000.0 * cpu['processCpuMs'] / window_deliveries if window_deliveries else None
    return dict(round=rnd, side=side, transport=transport, subscribers=subscribers, rate=rate, failed=False,
                health=health.group(1) if health else '?', generator=r['spec']['transport'],
                p50=lat['p50'], p99=lat['p99'], p999=lat['p999'], deliveries=r['deliveries']['perSecond'],
                achieved=r['publishes']['achievedPerSecond'],
                us=per_delivery_us, cores=scpu.get('coresUsed'), lost=cor['lost'], dup=cor['duplicated'],
                ooo=cor['outOfOrder'], gen_cpu=cpu['percentOfOneCore'], gen_us=gen_us, busy=busy(text),
                others=others(text),
                load=r['machine']['loadAverage'])


def fmt(v, pattern):
    return '' if v is None else pattern.format(v)


def main(out):
    rows = [row(*r) for r in runs(out)]
    print('| round | server | generator | subscribers | publishes/s | deliveries/s | p50 ms | p99 ms | p99.9 ms '
          '| server CPU per delivery | server cores | lost / dup / ooo | generator CPU (of 1 core) | generator CPU per delivery '
          '| machine busy '
          '| load at start | other java processes |')
    print('| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | :---: | ---: | ---: | ---: | ---: '
          '| ---: |')
    for x in rows:
        if x['failed']:
            print(f"| {x['round']} | {x['transport']} | | {x['subscribers']} | no result | | | | | | | | | | | | |")
            continue
        print(f"| {x['round']} | {x['health']} | {x['generator']} | {x['subscribers']:,} | {x['achieved']:,.0f} "
              f"| {x['deliveries']:,.0f} "
              f"| {x['p50']:.2f} | {x['p99']:.2f} | {x['p999']:.2f} | {fmt(x['us'], '{:.2f} µs')} "
              f"| {fmt(x['cores'], '{:.2f}')} | {x['lost']} / {x['dup']} / {x['ooo']} | {x['gen_cpu']:.0f}% "
              f"| {fmt(x['gen_us'], '{:.2f} µs')} "
              f"| {fmt(x['busy'], '{:.0f}%')} | {x['load']:.2f} | {fmt(x['others'], '{}')} |")
    print()
    print('Medians over the rounds, of the runs no other java process shared (the transport varied is the one named):')
    print()
    print('| subscribers | offered/s | transport | runs | deliveries/s | p50 ms | p99 ms | server CPU per delivery '
          '| generator CPU per delivery |')
    print('| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |')
    ok = [x for x in rows if not x['failed'] and not x['others']]
    for subscribers, rate in dict.fromkeys((x['subscribers'], x['rate']) for x in ok):
        for transport in dict.fromkeys(x['transport'] for x in ok):
            xs = [x for x in ok if (x['subscribers'], x['rate']) == (subscribers, rate) and x['transport'] == transport]
            if not xs:
                continue
            us = [x['us'] for x in xs if x['us'] is not None]
            print(f"| {subscribers:,} | {rate:,} | {transport} | {len(xs)} "
                  f"| {statistics.median(x['deliveries'] for x in xs):,.0f} "
                  f"| {statistics.median(x['p50'] for x in xs):.2f} "
                  f"| {statistics.median(x['p99'] for x in xs):.2f} "
                  f"| {fmt(statistics.median(us) if us else None, '{:.2f} µs')} "
                  f"| {fmt(statistics.median(g) if (g := [x['gen_us'] for x in xs if x['gen_us']]) else None, '{:.2f} µs')} |")


if __name__ == '__main__':
    main(sys.argv[1])

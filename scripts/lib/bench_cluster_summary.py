"""The summary table of scripts/bench-cluster.sh, from the JSON files the load generator wrote.

Usage: python3 scripts/lib/bench_cluster_summary.py compare|diffusion|jetstream DIR   (prints Markdown)
"""
import csv
import glob
import json
import os
import re
import sys

# Diffusion's cluster: 100 million deliveries/s on 5 servers of 32 vCPUs (the seed write-up)
DIFFUSION_PER_VCPU = 100_000_000 / (5 * 32)


def load(path):
    with open(path) as f:
        return json.load(f)


def run_json(out, name):
    files = [f for f in glob.glob(os.path.join(out, name, '*.json')) if not f.endswith(('-sweep.json', 'kill.json'))]
    return load(files[0]) if files else None


def load_average(out, name):
    try:
        with open(os.path.join(out, name + '.load')) as f:
            return ' / '.join(line.split()[1] for line in f)  # one-minute figures, before / after
    except OSError:
        return ''


def machine_busy(out, name, cores):
    """Cores busy on the whole machine over the generator's run (set-up and warm-up included), from /proc/stat."""
    try:
        with open(os.path.join(out, name + '.cpu')) as f:
            ticks = [[int(x) for x in line.split()[2:]] for line in f]
    except (OSError, ValueError):
        return ''
    if len(ticks) != 2:
        return ''
    delta = [b - a for a, b in zip(ticks[0], ticks[1])]
    total, idle = sum(delta[:8]), delta[3] + delta[4]  # user nice system idle iowait irq softirq steal
    return f"{cores * (total - idle) / total:.2f} of {cores}" if total else ''


def row(label, r, out=None, name=None):
    lat, cor, pub = r['latencyMs'], r['correctness'], r['publishes']
    cpu = r.get('serverCpu') or {}
    cores = f"{cpu['coresUsed']:.2f}" if cpu.get('known') else ''
    per_core = f"{cpu['deliveriesPerCoreSecond']:,.0f}" if cpu.get('known') else ''
    failed = f"{pub['failed']:,}" if pub['failed'] else '0'
    load = load_average(out, name) if name else ''
    busy = machine_busy(out, name, r['machine']['cores']) if name else ''
    return (f"| {label} | {pub['achievedPerSecond']:,.0f} | {r['deliveries']['perSecond']:,.0f} | {lat['p50']:.2f} | "
            f"{lat['p99']:.2f} | {lat['p999']:.2f} | {lat['max']:.1f} | {cor['lost']} / {cor['duplicated']} / "
            f"{cor['outOfOrder']} | {failed} | {cores} | {r['cpu']['percentOfOneCore'] / 100:.2f} | {per_core} | "
            f"{busy} | {load} |")


HEADER = ("| run | publishes/s | deliveries/s | p50 ms | p99 ms | p99.9 ms | max ms | lost / dup / out of order "
          "| failed publishes | server cores used | generator cores used | deliveries per server CPU s "
          "| machine cores busy | load average before / after |\n"
          "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |")


def silence(out, kill_ms, name='kill'):
    """When no subscriber received anything after the kill, from the kill run NAME's intervals."""
    files = glob.glob(os.path.join(out, name, '*-intervals.csv'))
    if not files:
        return 'no intervals'
    with open(files[0]) as f:
        rows = [(int(r['epochMs']), float(r['intervalS']), int(r['deliveries'])) for r in csv.DictReader(f)]
    after = [(end - kill_ms, length, n) for end, length, n in rows if end > kill_ms]
    empty = [(end, length) for end, length, n in after if n == 0]
    if not empty:
        return 'no 100-ms interval without deliveries after the kill'
    first_end, length = empty[0]
    last_end = empty[-1][0]
    return (f"no delivery in {len(empty)} of the {length * 1000:.0f}-ms intervals between "
            f"{(first_end - length * 1000) / 1000:+.2f} s and {last_end / 1000:+.2f} s after the kill")


def compare(out):
    cluster, single, kill = run_json(out, 'cluster'), run_json(out, 'single'), run_json(out, 'kill')
    lines = [f"# bench-cluster {os.path.basename(out)}", "", HEADER]
    for label, name, r in (('five nodes', 'cluster', cluster), ('five nodes, leader killed', 'kill', kill),
                           ('one node', 'single', single)):
        if r:
            lines.append(row(label, r, out, name))
    lines.append("")
    if cluster and single:
        ratio = cluster['deliveries']['perSecond'] / single['deliveries']['perSecond']
        lines.append(f"- cluster / single deliveries/s: **{ratio:.2f}x** (goal: at least 0.8x); p50 "
                     f"{cluster['latencyMs']['p50']:.2f} against {single['latencyMs']['p50']:.2f} ms, p99 "
                     f"{cluster['latencyMs']['p99']:.2f} against {single['latencyMs']['p99']:.2f} ms")
    if kill:
        lines += kill_lines(out, 'kill', kill, lambda p: f"node-{p % 5 + 1}")
    return "\n".join(lines) + "\n"


def kill_lines(out, name, kill, node_of_publisher, goal='; goal: under 2 s'):
    """The bullets of the kill run NAME: when acks and deliveries resumed; what was acked, lost, late."""
    k = load(os.path.join(out, name, 'kill.json'))
    p = kill['pauses']
    ack_pause = (p['ackGapEndEpochMs'] - k['killEpochMs']) / 1000
    delivery_pause = (p['deliveryGapEndEpochMs'] - k['killEpochMs']) / 1000
    # answers already on their way still arrive just after the kill: the gap starts near it, not before it
    began = (p['ackGapEndEpochMs'] - p['longestAckGapMs'] - k['killEpochMs']) / 1000
    delivery_began = (p['deliveryGapEndEpochMs'] - p['longestDeliveryGapMs'] - k['killEpochMs']) / 1000
    lines = [f"- {k['leader']} (the leader) killed: every publisher acked again **{ack_pause:.2f} s** after the "
             f"kill (the slowest, publisher {p['ackGapPublisher']}, homed on {node_of_publisher(p['ackGapPublisher'])}: "
             f"no ack from {began:+.2f} s{'' if abs(began) < 1 else ' (NOT at the kill)'}){goal}",
             f"- deliveries, all subscribers together: {silence(out, k['killEpochMs'], name)}; the longest gap one "
             f"subscriber saw: {p['longestDeliveryGapMs'] / 1000:.2f} s from {delivery_began:+.2f} s to "
             f"{delivery_pause:+.2f} s (subscriber {p['deliveryGapSubscriber']})"]
    pub, cor = kill['publishes'], kill['correctness']
    late = cor.get('lostThenReceived', 0)
    late_words = f" ({late:,} of them came after all, after a later value of their topic)" if late else ''
    lines.append(f"- during the kill run: {pub['acked']:,} of {pub['issued']:,} publishes acked, failed after the "
                 f"client's retries {pub.get('failedByReason') or {}}; of those, received all the same "
                 f"{cor.get('unackedDelivered', 0):,} (late {cor.get('unackedLate', 0):,}), never "
                 f"{cor.get('unackedMissed', 0):,} (deliveries summed over subscribers); acked values lost "
                 f"{cor['lost']}{late_words}, duplicated {cor['duplicated']}, out of order {cor['outOfOrder']}; "
                 f"disconnects {cor['disconnects']}")
    return lines


SYSTEMS = (('jetstream', 'JetStream'), ('ringcast', 'Ringcast'))

VS_HEADER = ("| publishes/s | system | acked/s | ack p50 ms | ack p99 ms | delivery p50 ms | delivery p99 ms "
             "| deliveries/s | lost / dup / out of order | failed publishes | server cores used "
             "| server CPU µs per delivery | server RSS sum MB (end / peak) | longest pause between acks ms "
             "| generator cores used | load average before / after |\n"
             "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: "
             "| ---: | --- |")


def vs_row(rate, label, r, out, name):
    """One run of --vs-jetstream. CPU per delivery is the servers' CPU over the measured deliveries, for both."""
    pub, lat, ack, cor = r['publishes'], r['latencyMs'], r.get('ackLatencyMs') or {}, r['correctness']
    cpu = r.get('serverCpu') or {}
    known = cpu.get('known')
    measured = r['deliveries']['measured']
    per_delivery = f"{cpu['cpuMs'] * 1000 / measured:.2f}" if known and measured else ''
    rss = (f"{cpu['rssBytes'] / 2**20:,.0f} / {cpu['peakRssBytes'] / 2**20:,.0f}"
           if cpu.get('rssBytes', -1) > 0 and cpu.get('peakRssBytes', -1) > 0 else '')
    late = cor.get('lostThenReceived', 0)
    cores = f"{cpu['coresUsed']:.2f}" if known else ''
    return (f"| {rate:,} | {label} | {pub.get('ackedPerSecond', 0):,.0f} | {ack.get('p50', 0):.2f} | "
            f"{ack.get('p99', 0):.2f} | {lat['p50']:.2f} | {lat['p99']:.2f} | {r['deliveries']['perSecond']:,.0f} | "
            f"{cor['lost']:,}{f' ({late:,} late)' if late else ''} / {cor['duplicated']:,} / {cor['outOfOrder']:,} | "
            f"{pub['failed']:,} | {cores} | {per_delivery} | {rss} | "
            f"{r['pauses']['longestAckGapMs']:,.1f} | {r['cpu']['percentOfOneCore'] / 100:.2f} | "
            f"{load_average(out, name)} |")


def snapshots_total(out, name):
    """The Ringcast nodes' snapshots so far, summed, as read after run NAME (NAME-metrics.txt); None if unread."""
    path = os.path.join(out, f"{name}-metrics.txt")
    if not os.path.exists(path):
        return None
    total = 0.0
    with open(path) as f:
        for line in f:
            m = re.match(r'^node-\d+ ringcast_cluster_snapshots_total(?:\{[^}]*\})? (\S+)$', line.strip())
            if m:
                total += float(m.group(1))
    return total


def snapshots_per_run(out, names):
    """How many snapshots the nodes took during each run of NAMES (in the order run), its unmeasured lead-in included."""
    counts, before = [], snapshots_total(out, 'warmup-ringcast')
    for name in names:
        after = snapshots_total(out, name)
        counts.append(None if after is None or before is None else int(after - before))
        before = after
    return counts


def vs_jetstream(out):
    """--vs-jetstream: both systems side by side at each rate, then each one's leader kill."""
    lines = [f"# bench-cluster --vs-jetstream {os.path.basename(out)}", "", VS_HEADER]
    rates = sorted({int(os.path.basename(d).split('-')[0]) for d in glob.glob(os.path.join(out, '[0-9]*-*'))
                    if os.path.isdir(d)})
    for rate in rates:
        for system, label in SYSTEMS:
            r = run_json(out, f"{rate}-{system}")
            if r:
                lines.append(vs_row(rate, label, r, out, f"{rate}-{system}"))
    lines.append("")
    ringcast_runs = [f"{rate}-ringcast" for rate in rates if run_json(out, f"{rate}-ringcast")]
    counts = snapshots_per_run(out, ringcast_runs)
    if any(c is not None for c in counts):
        lines += ["Ringcast snapshots during each run (the five nodes', its unmeasured lead-in included): "
                  + ", ".join(f"{name.split('-')[0]}/s: {c if c is not None else '?'}"
                              for name, c in zip(ringcast_runs, counts)), ""]
    kills = [(system, label, run_json(out, f"kill-{system}")) for system, label in SYSTEMS]
    if any(r for _, _, r in kills):
        lines += ["## Leader killed (SIGKILL) inside the measured window", "", VS_HEADER]
        for system, label, r in kills:
            if r:
                lines.append(vs_row(r['publishes']['offeredPerSecond'], label, r, out, f"kill-{system}"))
        lines.append("")
        for system, label, r in kills:
            if r:
                if system == 'jetstream':
                    lines += [f"{label} (its stream's leader killed):", ""] + kill_lines(
                        out, f"kill-{system}", r, lambda p: f"n{p % 5 + 1}", goal='') + [""]
                else:
                    lines += [f"{label} (its Raft leader killed):", ""] + kill_lines(
                        out, f"kill-{system}", r, lambda p: f"node-{p % 5 + 1}") + [""]
    return "\n".join(lines)


def diffusion(out):
    lines = [f"# bench-cluster --diffusion {os.path.basename(out)}", ""]
    for name, bound in (('cluster-p99-10ms', 10), ('cluster-p99-100ms', 100), ('single-p99-10ms', 10),
                        ('single-p99-100ms', 100)):
        files = glob.glob(os.path.join(out, name, '*-sweep.json'))
        if not files:
            continue
        sweep = load(files[0])
        lines += [f"## {name}: clean = p99 < {bound} ms, nothing lost, publishes at pace ({os.path.basename(files[0])})",
                  "", HEADER.replace('| run |', '| rate /s |', 1)]
        for step in sweep['steps']:
            label = f"{step['offeredRate']:,}" + ('' if step['clean'] else ' (not clean: ' + '; '.join(step['failedOn']) + ')')
            lines.append(row(label, step['result']))
        best = next((s for s in reversed(sweep['steps']) if s['clean']), None)
        lines.append("")
        if best:
            r = best['result']
            cpu = r.get('serverCpu') or {}
            per_core = cpu.get('deliveriesPerCoreSecond', -1)
            lines.append(f"- highest clean rate: **{best['offeredRate']:,} updates/s = "
                         f"{r['deliveries']['perSecond']:,.0f} deliveries/s**, p99 {r['latencyMs']['p99']:.2f} ms; "
                         f"servers used {cpu.get('coresUsed', -1):.2f} cores: **{per_core:,.0f} deliveries per server "
                         f"CPU second** ({per_core / DIFFUSION_PER_VCPU:.3f}x Diffusion's {DIFFUSION_PER_VCPU:,.0f} "
                         f"per vCPU); over the machine's {r['machine']['cores']} cores, generator included: "
                         f"{r['deliveries']['perSecond'] / r['machine']['cores']:,.0f} deliveries/s per core")
        else:
            lines.append("- no clean step")
        lines.append(f"- the whole sweep: load average before / after {load_average(out, name)}, machine cores busy "
                     f"{machine_busy(out, name, sweep['machine']['cores'])}")
        lines.append("")
    return "\n".join(lines)


if __name__ == '__main__':
    mode, out = sys.argv[1], sys.argv[2]
    print({'compare': compare, 'diffusion': diffusion, 'jetstream': vs_jetstream}[mode](out), end='')

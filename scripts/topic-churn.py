#!/usr/bin/env python3
"""Short-lived topics made and expired in a loop: does the node give everything back?

Starts a node through scripts/ringcast (the shipped launcher and its JVM options) with
`features.expireAfterMs` on `churn/#` and `limits.maxTopics` far below the topics made, then, in
rounds, publishes TOPICS new topics over HTTP (`POST /api/publish/batch`, 1,000 a request) at RATE
topics/s, waits until every one has expired and then for the node to give its heap back (it asks
for one full collection once most of its topics went, at most one a minute). A warm-up round comes
first, so that "before" is a node that ran. Prints, per round, the node's RSS and topic count
before and after, the refusals (`TOO_MANY_TOPICS` would mean expiry fell behind the limit) and the
time the round took, as a markdown table (docs/benchmarks.md, "Topics that expire"). Exits 1 on a
refusal or a topic left.

Usage: scripts/topic-churn.py [--topics 1000000] [--rounds 2] [--warmup 20000] [--rate 40000]
                              [--expire-ms 1000] [--max-topics 100000]
                              [--jar server/target/ringcast-server.jar]
"""
import argparse
import http.client
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BATCH = 1000


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def heap_used_mb(pid):
    """The heap in use now (young and old generation, jcmd GC.heap_info; no collection asked for), in MB."""
    info = subprocess.run(["jcmd", str(pid), "GC.heap_info"], check=True, capture_output=True, text=True).stdout
    used = [int(m) for m in re.findall(r"used (\d+)K", info)]
    return sum(used[:2]) / 1024 if used else float("nan")


def diagnose(pid, when):
    """With CHURN_DIAGNOSE naming a file, appends what the heap and native memory hold (JAVA_OPTS needs
    -XX:NativeMemoryTracking=summary for the second)."""
    if not os.environ.get("CHURN_DIAGNOSE"):
        return
    with open(os.environ["CHURN_DIAGNOSE"], "a") as h:
        h.write(f"===== {when}\n")
        for command in (["GC.class_histogram"], ["VM.native_memory", "summary"]):
            h.write(subprocess.run(["jcmd", str(pid)] + command, capture_output=True, text=True).stdout)
        mappings = subprocess.run(["pmap", "-x", str(pid)], capture_output=True, text=True).stdout.splitlines()
        h.write("largest resident mappings (pmap -x):\n" + "\n".join(
            sorted((m for m in mappings[2:-2]), key=lambda m: -int(m.split()[2]))[:15]) + "\n")


def metric(port, name):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    conn.close()
    m = re.search(r"^" + re.escape(name) + r"(?:\{[^}]*\})? ([0-9.eE+]+)$", text, re.M)
    return float(m.group(1)) if m else 0.0


def wait_until(what, condition, timeout_s):
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError("timed out waiting for " + what)
        time.sleep(0.1)  # polling interval


def publish_round(port, first, topics, rate):
    """Publishes topics churn/first .. churn/first+topics-1; returns (acked, refused by code)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    acked = 0
    refused = {}
    start = time.monotonic()
    for b in range(0, topics, BATCH):
        n = min(BATCH, topics - b)
        body = json.dumps({"publishes": [{"topic": f"churn/{first + b + i}", "text": "x" * 32} for i in range(n)]})
        conn.request("POST", "/api/publish/batch", body, {"Content-Type": "application/json"})
        answer = json.loads(conn.getresponse().read())
        acked += answer["acked"]
        for r in answer["results"]:
            if "error" in r:
                code = r["error"]["code"]
                refused[code] = refused.get(code, 0) + 1
        ahead = (b + n) / rate - (time.monotonic() - start)
        if ahead > 0:
            time.sleep(ahead)  # the publisher's pace
    conn.close()
    return acked, refused, time.monotonic() - start


def churn(port, pid, name, first, topics, rate, expire_ms):
    """One round: publishes the topics, waits until every one expired and then for the node's heap
    give-back (ringcast_heap_give_backs_total; at most one a minute); returns the round's row."""
    rss0, topics0 = rss_mb(pid), metric(port, "ringcast_topics")
    give_backs = metric(port, "ringcast_heap_give_backs_total")
    acked, refused, took = publish_round(port, first, topics, rate)
    peak = metric(port, "ringcast_topics")
    wait_until("every churn topic to expire", lambda: metric(port, "ringcast_topics") <= topics0,
               expire_ms / 1000 * 10 + 30)
    expired_at = time.monotonic()
    expired = metric(port, "ringcast_topics_expired_total")
    rss1 = rss_mb(pid)
    wait_until("the node to give its heap back",
               lambda: metric(port, "ringcast_heap_give_backs_total") > give_backs, 90)
    waited = time.monotonic() - expired_at
    rss2, heap = rss_mb(pid), heap_used_mb(pid)
    diagnose(pid, f"after round {name}")
    print(f"round {name}: {acked} acked in {took:.1f} s, refused {refused or 'none'}, RSS {rss0:.0f} -> {rss1:.0f} "
          f"MB once expired, {rss2:.0f} MB {waited:.1f} s later after the node's give-back, expired so far "
          f"{expired:.0f}", flush=True)
    return (name, acked, refused, took, peak, rss0, topics0, rss1, metric(port, "ringcast_topics"), expired, waited,
            rss2, heap)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--topics", type=int, default=1_000_000)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--warmup", type=int, default=20_000,
                   help="topics of a first round not counted, so that 'before' is a node that ran (compiled code, "
                        "buffer pools), as the rounds' 'after' is; 0: before is the node as started")
    p.add_argument("--rate", type=int, default=40_000)
    p.add_argument("--expire-ms", type=int, default=1000)
    p.add_argument("--max-topics", type=int, default=100_000)
    p.add_argument("--jar", default=os.path.join(ROOT, "server/target/ringcast-server.jar"))
    a = p.parse_args()

    port = free_port()
    config = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
    config.write(f"""server:
  host: 127.0.0.1
  port: {port}
limits:
  maxTopics: {a.max_topics}
features:
  overrides:
    - selector: "churn/#"
      expireAfterMs: {a.expire_ms}
security:
  anonymousRoles: ["all"]
  roles:
    - name: "all"
      subscribe: ["#"]
      publish: ["#"]
demo:
  enabled: false
""")
    config.close()
    log = open(os.path.join(tempfile.gettempdir(), "topic-churn-server.log"), "w")
    server = subprocess.Popen([os.path.join(ROOT, "scripts/ringcast"), "--config", config.name],
                              env=dict(os.environ, RINGCAST_JAR=a.jar), stdout=log, stderr=subprocess.STDOUT)
    try:
        def up():
            try:
                return metric(port, "ringcast_topics") >= 0
            except OSError:
                return False
        wait_until("the node to start", up, 60)
        time.sleep(2)  # let start-up settle before the first reading
        cold_rss = rss_mb(server.pid)
        print(f"node pid {server.pid}: RSS {cold_rss:.0f} MB at start", flush=True)
        if a.warmup:
            churn(port, server.pid, "warm-up", 0, a.warmup, a.rate, a.expire_ms)
        diagnose(server.pid, "before the first round")
        before_rss, before_heap = rss_mb(server.pid), heap_used_mb(server.pid)
        print(f"before the first round: RSS {before_rss:.0f} MB, heap used {before_heap:.0f} MB, "
              f"{metric(port, 'ringcast_topics'):.0f} topics", flush=True)
        rows = [churn(port, server.pid, r + 1, a.warmup + r * a.topics, a.topics, a.rate, a.expire_ms)
                for r in range(a.rounds)]
        print()
        print(f"Node started: RSS {cold_rss:.0f} MB. After a warm-up round of {a.warmup:,} topics: RSS "
              f"{before_rss:.0f} MB, heap used {before_heap:.0f} MB.")
        print()
        print("| round | topics made (acked) | refused | publish time | topics at the end of publishing "
              "| RSS before | topics before | RSS once all expired | topics after | expired, total "
              "| node's heap give-back after the last expiry | RSS after it | heap used after it |")
        print("| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for (r, acked, refused, took, peak, rss0, t0, rss1, t1, expired, waited, rss2, heap) in rows:
            ref = ", ".join(f"{k} {v}" for k, v in refused.items()) or "none"
            print(f"| {r} | {acked:,} | {ref} | {took:.1f} s | {peak:,.0f} | {rss0:.0f} MB | {t0:.0f} "
                  f"| {rss1:.0f} MB | {t1:.0f} | {expired:,.0f} | {waited:.1f} s | {rss2:.0f} MB | {heap:.0f} MB |")
        print(f"\n(limits.maxTopics {a.max_topics:,}, churn/# expireAfterMs {a.expire_ms}, "
              f"{a.rate:,} topics/s in batches of {BATCH}; RSS of the node's JVM from /proc)")
        if any(row[2] for row in rows) or any(row[8] for row in rows):
            sys.exit(1)
    finally:
        server.terminate()
        server.wait(30)
        os.unlink(config.name)


if __name__ == "__main__":
    main()

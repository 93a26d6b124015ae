#!/usr/bin/env python3
"""Turns the results of benchmarks/run.sh into BENCHMARKS.md (python3 standard library only).

Sub-commands:
  machine        --out FILE           record the machine (cores, memory, CPU, load) as JSON
  plan-profiles  --results DIR        print one line per missed goal family to profile with JFR:
                                      family <TAB> JMH regex <TAB> JMH parameter arguments
  summarize-jfr  --jfr FILE --out F   the execution samples of a JFR recording, frame by frame
  write          --results DIR --out BENCHMARKS.md [--findings FILE]

The results directory holds jmh.json, jmh-nixl.json, jmh-e2e.json and the read planner's
jmh-plan-*.json and jmh-read-*.json (JMH -rf json), plan-counts-*.json (the planned requests'
READs, descriptors and bytes, io.kvbridge.benchmarks.transfer.PlanCounts), jmh-real-size.json
and real-size-counts.json (a real model's KV at real size, io.kvbridge.benchmarks.transfer.
RealSizeReadBenchmark with JMH's GC profiler, and RealSizeCounts),
machine-start.json, machine-end.json, run.json (the command and settings), settings.json (the
benchmarks' fixed settings, io.kvbridge.benchmarks.RunSettings), optionally nixl-python.json
(python/nixl_read_bench.py) and jfr/<family>.json (summarize-jfr).

Every figure in the report comes from those files, except the goals below, which this file states
(GOAL_CONSTANTS). The findings file adds qualitative text only: report.py refuses a findings file
that states a figure, and fills its {self:FRAME} and {inclusive:FRAME} placeholders with the share
of the samples of this run's profile of the goal. benchmarks/src/test/python/test_report.py checks
that every figure of a report moves with the results it was written from.

Every time is the median of a benchmark's measurement iterations; a ratio is a ratio of medians,
both sides measured in the same run.
"""

import argparse
import collections
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys

PKG = "io.kvbridge.benchmarks."
BOOKS = ["TABLE", "INSERTION_ORDERED", "FULL_SCAN"]
BOOK_NAMES = {
    "TABLE": "LeaseTable",
    "INSERTION_ORDERED": "(a) insertion-ordered",
    "FULL_SCAN": "(b) full scan",
}
UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
TO_NS = {"ns/op": 1.0, "us/op": 1e3, "ms/op": 1e6, "s/op": 1e9}
TOP_FRAMES = 12

NO_RESULTS = "_No results in this run; see `benchmarks/target/results/jmh.log`._"
NOT_MEASURED = "not measured in this run"
# Goals no benchmark measures yet: what the report says instead of a figure.
NO_MANY_PEERS_BENCHMARK = "not measured in this run (`ManyPeersBenchmark`)"
NO_GPU_CHECK = (
    "not measured: no GPU where this ran. On a GPU machine: `connector-nixl/src/test/gpu/assemble.sh`"
    " here, then `gpu-check.sh compare` in the bundle there; its `gpu-compare.json` goes into the"
    " results directory"
)

# ---- goals: the only figures this file states itself ------------------------------------------

IDLE_SWEEP_SIZE = "100000"  # live leases (a liveLeases parameter value)
IDLE_SWEEP_GOAL = 1000.0  # full scan time ÷ LeaseTable time
PER_OP_GOAL_NS = 1000.0
FAKE_GOAL = 0.8  # READ bandwidth ÷ raw copy bandwidth
FAKE_GOAL_MIN_BLOCK = "1MiB"  # the fake goal covers blocks at least this large
NIXL_BANDWIDTH_GOAL = 0.95  # kvbridge bandwidth ÷ Python binding bandwidth
NIXL_OVERHEAD_SHAPE = "16KiBx1"
CONTENT_CHECK_GOAL = 0.05  # checksum time ÷ READ time
CONTENT_CHECK_BLOCK = "1MiB"
PLAN_GOAL = 0.05  # plan time ÷ the fake transport's READ time of the same request
TRACING_OFF_GOAL = 0.01  # a request's span calls with tracing off ÷ the fake READ below
TRACING_OFF_SHAPE = "16KiBx1"
CHURN_LIVE_LEASES = "1000000"  # live leases of the churn goal (a liveLeases parameter value)
CHURN_ALLOC_GOAL = 0  # bytes allocated per renewal and per acknowledgement, at most
PREPARED_OVERHEAD_GOAL = 0.7  # kvbridge per-request time ÷ Python binding's, prepared lists both
PREPARED_BANDWIDTH_GOAL = 1.0  # kvbridge bandwidth ÷ Python binding's, prepared lists both
MANY_PEERS_GOAL = 0.9  # aggregate bandwidth per byte at 8 peers ÷ single peer
MANY_PEERS = "8"
REQUEST_PATH_GOAL = 1.0  # this build's answers per second ÷ the older build's, same run, interleaved
REAL_SIZE_BANDWIDTH_GOAL = 0.8  # real-size READ bandwidth ÷ one thread's copy of the same bytes
REAL_SIZE_MIN_TOKENS = "8192"  # the real-size bandwidth goal covers prompts at least this long
REAL_SIZE_PLAN_GOAL = 0.05  # real-size planning time ÷ the READ time of the same request
REAL_SIZE_HEAP_GROWTH = 2.0  # heap bytes per block, longest prompt ÷ shortest, at most
REAL_SIZE_CHECK_GOAL = 0.05  # real-size content check time ÷ the READ time of the same request
REAL_SIZE_CHECK_TOKENS = "8192"  # the prompt length of the real-size content check goal
REAL_SIZE_CHOICE_GOAL = 1.05  # the consumer's choice (staged or in place) ÷ the faster of the two, at most
PD_PATH_STEPS_GOAL = 1  # P/D added latency p50 ≤ this many step intervals + the load's transfer time
TTFT_EXPOSED_GOAL = 1.2  # streamed: (TTFT − prefill) p50 ÷ one layer's transfer, at most
TTFT_EXPOSED_MIN_TOKENS = "4096"  # the exposed-transfer goal covers prompts at least this long
TTFT_SHORT_GOAL = 1.05  # TTFT p50 with the default threshold ÷ the whole-request path's, at most
TTFT_SHORT_TOKENS = "128"  # the prompt length of that goal
ROUTING_SHARE_GOAL = 0.95  # prompt tokens from D's cache ÷ what an oracle of every cache could serve
ROUTING_DECISION_GOAL_NS = 1e6  # the router's decision p99, at most
ROUTING_DECISION_BLOCKS = 100000  # with at least this many blocks indexed
ROUTING_RECOVERY_GOAL_NS = 2e9  # an index that agrees with the engines again after a restart
GPU_SMALLEST = "64KiB"  # smallest request of the GPU check
GPU_LARGEST = "256MiB"  # largest request of the GPU check
GOAL_CONSTANTS = (
    "IDLE_SWEEP_SIZE",
    "IDLE_SWEEP_GOAL",
    "PER_OP_GOAL_NS",
    "FAKE_GOAL",
    "FAKE_GOAL_MIN_BLOCK",
    "NIXL_BANDWIDTH_GOAL",
    "NIXL_OVERHEAD_SHAPE",
    "CONTENT_CHECK_GOAL",
    "CONTENT_CHECK_BLOCK",
    "PLAN_GOAL",
    "TRACING_OFF_GOAL",
    "TRACING_OFF_SHAPE",
    "CHURN_LIVE_LEASES",
    "CHURN_ALLOC_GOAL",
    "PREPARED_OVERHEAD_GOAL",
    "PREPARED_BANDWIDTH_GOAL",
    "MANY_PEERS_GOAL",
    "MANY_PEERS",
    "REQUEST_PATH_GOAL",
    "GPU_SMALLEST",
    "GPU_LARGEST",
    "REAL_SIZE_BANDWIDTH_GOAL",
    "REAL_SIZE_MIN_TOKENS",
    "REAL_SIZE_PLAN_GOAL",
    "REAL_SIZE_HEAP_GROWTH",
    "REAL_SIZE_CHECK_GOAL",
    "REAL_SIZE_CHECK_TOKENS",
    "REAL_SIZE_CHOICE_GOAL",
    "PD_PATH_STEPS_GOAL",
    "TTFT_EXPOSED_GOAL",
    "TTFT_EXPOSED_MIN_TOKENS",
    "TTFT_SHORT_GOAL",
    "TTFT_SHORT_TOKENS",
    "ROUTING_SHARE_GOAL",
    "ROUTING_DECISION_GOAL_NS",
    "ROUTING_DECISION_BLOCKS",
    "ROUTING_RECOVERY_GOAL_NS",
)


# ---- reading results ---------------------------------------------------------------------------


class Result:
    """One benchmark with one set of parameters: median and spread of its iterations, in ns."""

    def __init__(self, entry):
        metric = entry["primaryMetric"]
        scale = TO_NS.get(metric["scoreUnit"])
        if scale is None:
            raise SystemExit(f"unexpected unit {metric['scoreUnit']} in {entry['benchmark']}")
        self.entry = entry
        self.sampled = entry["mode"] == "sample"
        if self.sampled:
            pct = metric["scorePercentiles"]
            self.median = pct["50.0"] * scale
            self.p99 = pct["99.0"] * scale
            self.mean = metric["score"] * scale
            self.low = self.high = None
            self.iterations = sum(len(fork) for fork in metric.get("rawDataHistogram", []))
        else:
            raw = [v * scale for fork in metric["rawData"] for v in fork]
            self.median = statistics.median(raw)
            self.low, self.high = min(raw), max(raw)
            self.iterations = len(raw)

    def spread(self):
        if self.low is None or self.iterations < 2:
            return ""
        return f" ({fmt_ns(self.low)}–{fmt_ns(self.high)})"


class Results:
    def __init__(self, directory):
        self.dir = directory
        self.by_key = {}
        self.entries = []
        for file in result_files(directory, "jmh"):
            path = os.path.join(directory, file)
            with open(path) as f:
                for entry in json.load(f):
                    self.entries.append(entry)
                    name = entry["benchmark"].removeprefix(PKG)
                    key = (name, tuple(sorted(entry["params"].items())) if entry.get("params") else ())
                    self.by_key[key] = Result(entry)
        self.machine_start = read_json(os.path.join(directory, "machine-start.json"))
        self.machine_end = read_json(os.path.join(directory, "machine-end.json"))
        self.run = read_json(os.path.join(directory, "run.json")) or {}
        self.settings = read_json(os.path.join(directory, "settings.json")) or {}
        self.nixl_python = read_json(os.path.join(directory, "nixl-python.json"))
        self.plan_counts = {}
        for file in result_files(directory, "plan-counts"):
            for row in read_json(os.path.join(directory, file)):
                key = tuple(row[k] for k in PLAN_PARAMS)
                self.plan_counts[key] = row
        self.real_size_counts = {}
        for row in read_json(os.path.join(directory, "real-size-counts.json")) or []:
            self.real_size_counts[tuple(row[k] for k in REAL_PARAMS)] = row
        self.real_size_staged = {}
        for row in read_json_lines(os.path.join(directory, "real-size-staged.jsonl")):
            key = tuple(row[k] for k in REAL_PARAMS + ("transport", "staging"))
            self.real_size_staged[key] = row
        self.python_rounds = read_json_lines(os.path.join(directory, "python-rounds.jsonl"))
        self.pd_path = {
            row["connector"]: row for row in read_json_lines(os.path.join(directory, "pd-path.jsonl"))
        }
        self.ttft = {
            (row["connector"], row["mode"], str(row["tokens"])): row
            for row in read_json_lines(os.path.join(directory, "ttft.jsonl"))
        }
        self.gpu = read_json(os.path.join(directory, "gpu-compare.json"))
        self.request_path = read_json(os.path.join(directory, "request-path.json"))
        self.multi_turn = read_json(os.path.join(directory, "multi-turn.json"))

    def get(self, name, **params):
        return self.by_key.get((name, tuple(sorted((k, str(v)) for k, v in params.items()))))

    def find(self, name, **params):
        """The result of {@code name} whose parameters include {@code params}; other parameters
        (e.g. ones a run left at their default) may take any value."""
        want = {(k, str(v)) for k, v in params.items()}
        for (n, key), result in self.by_key.items():
            if n == name and want <= set(key):
                return result
        return None

    def has(self, prefix):
        return any(name.startswith(prefix) for name, _ in self.by_key)

    def values(self, prefix, param):
        """The values of the JMH parameter {@code param} among the results of the benchmarks whose
        name starts with {@code prefix}, smallest first."""
        found = {dict(key)[param] for name, key in self.by_key if name.startswith(prefix) and param in dict(key)}
        return sorted(found, key=param_order)

    def setting(self, section, name):
        """A fixed setting of the benchmarks, as this run's settings.json recorded it."""
        return self.settings.get(section, {}).get(name)

    def profile(self, family):
        return read_json(os.path.join(self.dir, "jfr", family + ".json"))


def result_files(directory, prefix):
    """The JSON files of {@code directory} named {@code prefix}*.json, in name order."""
    if not os.path.isdir(directory):
        return []
    found = [f for f in os.listdir(directory) if f.startswith(prefix) and f.endswith(".json")]
    return sorted(found, key=lambda f: (f != prefix + ".json", f))


def read_json(path):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def read_json_lines(path):
    """The JSON documents of a JSON-lines file, or none if there is no such file."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def secondary_sum(result, metric):
    """The sum over the measurement iterations of a secondary metric (e.g. an aux counter)."""
    if result is None:
        return None
    found = result.entry.get("secondaryMetrics", {}).get(metric)
    if not found:
        return None
    return sum(v for fork in found["rawData"] for v in fork)


def secondary_median(result, metric):
    if result is None:
        return None
    found = result.entry.get("secondaryMetrics", {}).get(metric)
    if not found:
        return None
    return statistics.median(v for fork in found["rawData"] for v in fork)


SHAPE = re.compile(r"(\d+)(B|KiB|MiB)x(\d+)")
BLOCK = re.compile(r"(\d+)(B|KiB|MiB)")
TP = re.compile(r"(\d+)x(\d+)")  # producer ranks x consumer ranks


def block_bytes(block):
    m = BLOCK.fullmatch(block)
    return int(m.group(1)) * UNITS[m.group(2)]


def shape_block(shape):
    m = SHAPE.fullmatch(shape)
    return int(m.group(1)) * UNITS[m.group(2)]


def shape_bytes(shape):
    return shape_block(shape) * int(SHAPE.fullmatch(shape).group(3))


def param_order(value):
    if value.isdigit():
        return (0, int(value), 0, "")
    if SHAPE.fullmatch(value):
        return (1, shape_block(value), shape_bytes(value), "")
    if BLOCK.fullmatch(value):
        return (1, block_bytes(value), 0, "")
    tp = TP.fullmatch(value)
    if tp:
        return (2, int(tp.group(1)), int(tp.group(2)), "")
    return (3, 0, 0, value)


# ---- formatting --------------------------------------------------------------------------------


def fmt_ns(ns):
    if ns is None:
        return "—"
    if ns < 1e3:
        return f"{ns:.0f} ns" if ns >= 10 else f"{ns:.1f} ns"
    if ns < 1e6:
        return f"{ns / 1e3:.2f} µs" if ns < 1e4 else f"{ns / 1e3:.1f} µs"
    if ns < 1e9:
        return f"{ns / 1e6:.2f} ms" if ns < 1e7 else f"{ns / 1e6:.1f} ms"
    return f"{ns / 1e9:.2f} s"


def fmt_limit_ns(ns):
    """A time a goal states, as short as it can be written."""
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:,g} {unit}"
    return f"{ns:,g} ns"


def fmt_ratio(r):
    if r is None:
        return "—"
    if r >= 100:
        return f"{r:,.0f}×"
    if r >= 10:
        return f"{r:.1f}×"
    return f"{r:.2f}×"


def fmt_factor(x):
    """A factor a goal states."""
    return f"{x:,g}×"


def fmt_pct(fraction):
    if fraction is None:
        return "—"
    return f"{fraction * 100:,.0f}%" if fraction >= 1 else f"{fraction * 100:.3g}%"


def fmt_limit_pct(fraction):
    return f"{fraction * 100:g}%"


def fmt_gbps(bytes_, ns):
    return f"{bytes_ / ns:.2f} GB/s"


def fmt_size(n):
    return f"{int(n):,}"


def fmt_bytes(n):
    n = int(n)
    for unit in ("GiB", "MiB", "KiB"):
        if n >= UNITS[unit]:
            return f"{n / UNITS[unit]:,g} {unit}"
    return f"{n:,} B"


def fmt_setting(value, scale=1, unit=""):
    """A setting from settings.json, or a mark where the run recorded none."""
    if value is None:
        return "(not recorded)"
    return f"{value / scale:,g}{unit}"


def block_label(block):
    return fmt_bytes(block_bytes(block))


def shape_label(shape):
    return shape.replace("x", " × ")


def verdict(ok):
    if ok is None:
        return "—"
    return "**met**" if ok else "**missed**"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def ratio(baseline, subject):
    if baseline is None or subject is None:
        return None
    return baseline.median / subject.median


def share_of(part, whole):
    """{@code part}'s time as a fraction of {@code whole}'s."""
    return ratio(part, whole)


# ---- goals -------------------------------------------------------------------------------------


class Goal:
    """One checked goal: a family (what a profile and a finding are keyed by) and a verdict."""

    def __init__(self, family, text, measured, ok, jmh=None, params=None, badness=0.0, profile=None):
        self.family, self.text, self.measured, self.ok = family, text, measured, ok
        self.jmh, self.params, self.badness = jmh, params or {}, badness
        # Lines that stand for a JFR profile where the run measured the goal's parts itself.
        self.profile = profile


def sweep_goal_text():
    return (
        f"idle sweep at {fmt_size(IDLE_SWEEP_SIZE)} live leases ≥ {fmt_factor(IDLE_SWEEP_GOAL)}"
        " cheaper than a full scan"
    )


def fake_goal_text():
    return (
        f"fake transport READ ≥ {fmt_factor(FAKE_GOAL)} raw copy bandwidth, blocks ≥"
        f" {block_label(FAKE_GOAL_MIN_BLOCK)}"
    )


def nixl_goal_text():
    return f"kvbridge NIXL READ ≥ {fmt_factor(NIXL_BANDWIDTH_GOAL)} the bandwidth of NIXL's Python binding"


def churn_goal_text():
    return (
        f"LeaseTable under churn at {fmt_size(CHURN_LIVE_LEASES)} live leases: ≤"
        f" {CHURN_ALLOC_GOAL:g} bytes allocated per renew and per acknowledge"
    )


def prepared_overhead_goal_text():
    return (
        f"prepared lists: per-request time of a {shape_label(NIXL_OVERHEAD_SHAPE)} READ ≤"
        f" {fmt_factor(PREPARED_OVERHEAD_GOAL)} NIXL's Python binding (prepared lists too, rounds"
        " interleaved)"
    )


def prepared_bandwidth_goal_text():
    return (
        f"prepared lists: bandwidth ≥ {fmt_factor(PREPARED_BANDWIDTH_GOAL)} NIXL's Python binding at"
        " every shape (rounds interleaved)"
    )


def many_peers_goal_text():
    return (
        f"many peers (fake and NIXL host memory): aggregate bandwidth per byte at {MANY_PEERS} peers"
        f" ≥ {fmt_factor(MANY_PEERS_GOAL)} a single peer's"
    )


def gpu_goal_text():
    return (
        "GPU path: NIXL VRAM→VRAM READ against cudaMemcpy device-to-device,"
        f" {block_label(GPU_SMALLEST)} to {block_label(GPU_LARGEST)}"
    )


def content_check_goal_text(transport):
    return (
        f"content check (CRC-32C) ≤ {fmt_limit_pct(CONTENT_CHECK_GOAL)} of the READ at"
        f" {block_label(CONTENT_CHECK_BLOCK)}, {transport}"
    )


# The content check benchmarks, by transport: (family, JMH class, transport name in the report).
CONTENT_CHECKS = [
    ("fake-content-check", "transfer.FakeContentCheckBenchmark", "fake"),
    ("nixl-content-check", "transfer.NixlContentCheckBenchmark", "NIXL host memory"),
]


def lease_goals(res):
    goals = []
    table_idle = res.get("lease.LeaseBookBenchmark.sweepIdle", book="TABLE", liveLeases=IDLE_SWEEP_SIZE)
    scan_idle = res.get(
        "lease.LeaseBookBenchmark.sweepIdle", book="FULL_SCAN", liveLeases=IDLE_SWEEP_SIZE
    )
    r = ratio(scan_idle, table_idle)
    if r is not None:
        goals.append(
            Goal(
                "lease-sweep",
                sweep_goal_text(),
                f"{fmt_ratio(r)} ({fmt_ns(table_idle.median)} vs {fmt_ns(scan_idle.median)})",
                r >= IDLE_SWEEP_GOAL,
                "lease.LeaseBookBenchmark.sweepIdle",
                {"book": "TABLE", "liveLeases": IDLE_SWEEP_SIZE},
                IDLE_SWEEP_GOAL / r,
            )
        )
    for family, name, params, what in [
        ("lease-grant", "lease.LeaseTableOpsBenchmark.grant", {}, "grant"),
        ("lease-acknowledge", "lease.LeaseTableOpsBenchmark.acknowledge", {}, "acknowledge (complete)"),
        ("lease-renew", "lease.LeaseBookBenchmark.renew", {"book": "TABLE"}, "renew (heartbeat)"),
    ]:
        measured = {n: res.get(name, liveLeases=n, **params) for n in res.values(name, "liveLeases")}
        measured = {n: m for n, m in measured.items() if m is not None}
        if not measured:
            continue
        missed = [n for n, m in measured.items() if m.median >= PER_OP_GOAL_NS]
        worst = max(measured, key=lambda n: measured[n].median)
        goals.append(
            Goal(
                family,
                f"LeaseTable {what} < {fmt_limit_ns(PER_OP_GOAL_NS)}",
                ", ".join(f"{fmt_size(n)}: {fmt_ns(m.median)}" for n, m in measured.items()),
                not missed,
                name,
                dict(params, liveLeases=worst),
                measured[worst].median / PER_OP_GOAL_NS,
            )
        )
    return goals


def fake_goals(res):
    rows = []
    for shape in res.values("transfer.FakeReadBenchmark.", "shape"):
        if shape_block(shape) < block_bytes(FAKE_GOAL_MIN_BLOCK):
            continue
        raw = res.get("transfer.FakeReadBenchmark.rawCopy", shape=shape)
        read = res.get("transfer.FakeReadBenchmark.transportRead", shape=shape)
        if raw and read:
            rows.append((shape, ratio(raw, read)))
    if not rows:
        return []
    worst = min(rows, key=lambda r: r[1])
    return [
        Goal(
            "fake-read",
            fake_goal_text(),
            ", ".join(f"{s}: {fmt_ratio(r)}" for s, r in rows),
            all(r >= FAKE_GOAL for _, r in rows),
            "transfer.FakeReadBenchmark.transportRead",
            {"shape": worst[0]},
            FAKE_GOAL / worst[1],
        )
    ]


def nixl_rows(res):
    """(shape, python result dict, java Result) for every shape measured on both sides."""
    if not res.nixl_python:
        return []
    python = {r["shape"]: r for r in res.nixl_python["results"]}
    rows = []
    for shape in res.values("transfer.NixlReadBenchmark.", "shape"):
        java = res.find("transfer.NixlReadBenchmark.transportRead", shape=shape)
        if shape in python and java is not None:
            rows.append((shape, python[shape], java))
    return rows


def nixl_goals(res):
    rows = nixl_rows(res)
    if not rows:
        return []
    ratios = [(s, (p["us_per_request"] * 1e3) / j.median) for s, p, j in rows]
    worst = min(ratios, key=lambda r: r[1])
    goals = [
        Goal(
            "nixl-read",
            nixl_goal_text(),
            ", ".join(f"{s}: {fmt_ratio(r)}" for s, r in ratios),
            all(r >= NIXL_BANDWIDTH_GOAL for _, r in ratios),
            "transfer.NixlReadBenchmark.transportRead",
            {"shape": worst[0]},
            NIXL_BANDWIDTH_GOAL / worst[1],
        )
    ]
    small = [(s, p, j) for s, p, j in rows if s == NIXL_OVERHEAD_SHAPE]
    if small:
        s, p, j = small[0]
        overhead_ok = j.median <= p["us_per_request"] * 1e3
        goals.append(
            Goal(
                "nixl-overhead",
                f"per-request time of the smallest READ ({shape_label(NIXL_OVERHEAD_SHAPE)}) no worse"
                " than the Python binding",
                f"{fmt_ns(j.median)} vs {fmt_ns(p['us_per_request'] * 1e3)}",
                overhead_ok,
                "transfer.NixlReadBenchmark.transportRead",
                {"shape": s},
                j.median / (p["us_per_request"] * 1e3),
            )
        )
    return goals


def churn_goals(res):
    """Bytes allocated per call inside the timed renewals and acknowledgements of the churn
    benchmark (its allocation counters), with JMH's GC profiler's figure beside it where the run
    used it (for acknowledge that also counts the untimed grant of each batch)."""
    cells, worst, worst_op = [], 0.0, "renew"
    for op in ("renew", "acknowledge"):
        r = res.get(f"lease.LeaseChurnBenchmark.{op}", liveLeases=CHURN_LIVE_LEASES)
        allocated = secondary_sum(r, "allocatedBytes")
        calls = secondary_sum(r, "calls")
        if allocated is None or not calls:
            continue
        per_call = allocated / calls
        if per_call > worst:
            worst, worst_op = per_call, op
        norm = secondary_median(r, "gc.alloc.rate.norm")
        gc = f"; GC profiler {norm:,.0f} B/op" if norm is not None else ""
        if gc and op == "acknowledge":
            gc += " with the untimed grant and confirmation of each lease"
        cells.append(f"{op}: {per_call:,.0f} B/call ({fmt_ns(r.median)}{gc})")
    if not cells:
        return []
    return [
        Goal(
            "lease-churn-alloc",
            churn_goal_text(),
            ", ".join(cells),
            worst <= CHURN_ALLOC_GOAL,
            f"lease.LeaseChurnBenchmark.{worst_op}",
            {"liveLeases": CHURN_LIVE_LEASES},
            worst,
        )
    ]


def prepared_rows(res):
    """(shape, Python per-request ns, kvbridge Result) per shape measured on both sides: the
    Python side is the median of its rounds interleaved with the JMH iterations."""
    rounds = collections.defaultdict(list)
    for r in res.python_rounds:
        if r.get("benchmark") == "NixlPreparedReadBenchmark" and "us_per_request" in r:
            rounds[r["shape"]].append(r["us_per_request"] * 1e3)
    rows = []
    for shape in res.values("transfer.NixlPreparedReadBenchmark.", "shape"):
        java = res.find("transfer.NixlPreparedReadBenchmark.transportReadPrepared", shape=shape)
        if java is not None and rounds.get(shape):
            rows.append((shape, statistics.median(rounds[shape]), java))
    return rows


def prepared_goals(res):
    rows = prepared_rows(res)
    if not rows:
        return []
    ratios = [(s, p / j.median) for s, p, j in rows]
    worst = min(ratios, key=lambda r: r[1])
    goals = [
        Goal(
            "nixl-prepared-bandwidth",
            prepared_bandwidth_goal_text(),
            ", ".join(f"{s}: {fmt_ratio(r)}" for s, r in ratios),
            all(r >= PREPARED_BANDWIDTH_GOAL for _, r in ratios),
            "transfer.NixlPreparedReadBenchmark.transportReadPrepared",
            {"shape": worst[0]},
            PREPARED_BANDWIDTH_GOAL / worst[1],
        )
    ]
    small = [(s, p, j) for s, p, j in rows if s == NIXL_OVERHEAD_SHAPE]
    if small:
        s, p, j = small[0]
        r = j.median / p
        goals.insert(
            0,
            Goal(
                "nixl-prepared-overhead",
                prepared_overhead_goal_text(),
                f"{fmt_ratio(r)} ({fmt_ns(j.median)} vs {fmt_ns(p)})",
                r <= PREPARED_OVERHEAD_GOAL,
                "transfer.NixlPreparedReadBenchmark.transportReadPrepared",
                {"shape": s},
                r / PREPARED_OVERHEAD_GOAL,
            ),
        )
    return goals


def gpu_goals(res):
    """The GPU check's comparison, where a results directory holds one: per size, READ bandwidth ÷
    cudaMemcpy bandwidth. The goal is the measurement itself; it states no ratio to meet."""
    if not res.gpu or not res.gpu.get("results"):
        return []
    cells = [
        f"{fmt_bytes(r['bytes'])}: {fmt_gbps(r['bytes'], r['read_ns'])} vs"
        f" {fmt_gbps(r['bytes'], r['memcpy_ns'])} ({fmt_ratio(r['memcpy_ns'] / r['read_ns'])})"
        for r in res.gpu["results"]
    ]
    return [Goal("gpu-path", gpu_goal_text(), "; ".join(cells) + f", {res.gpu['agents']}", None)]


MANY_PEERS_BENCH = "transfer.ManyPeersBenchmark.readFromEveryPeer"
DIRECTIONS = {
    "ONE_DECODE_MANY_PREFILLS": "one D reading from n P",
    "ONE_PREFILL_MANY_DECODES": "one P serving n D",
}


def many_peers_rows(res):
    """(transport, direction, {peers: (Result, ratio to one peer per byte)}) per combination
    measured with one peer and more."""
    rows = []
    counts = res.values(MANY_PEERS_BENCH, "peers")
    if not counts:
        return rows
    fewest = counts[0]  # one peer, in a full run
    for transport in res.values(MANY_PEERS_BENCH, "transport"):
        for direction in DIRECTIONS:
            one = res.find(MANY_PEERS_BENCH, transport=transport, direction=direction, peers=fewest)
            if one is None:
                continue
            cells = {}
            for n in counts:
                r = res.find(MANY_PEERS_BENCH, transport=transport, direction=direction, peers=n)
                if r is not None:
                    cells[n] = (r, int(n) / int(fewest) * one.median / r.median)
            rows.append((transport, direction, cells))
    return rows


def many_peers_goals(res):
    checked = [
        (t, d, cells[MANY_PEERS][1]) for t, d, cells in many_peers_rows(res) if MANY_PEERS in cells
    ]
    if not checked:
        return []
    worst = min(checked, key=lambda c: c[2])
    return [
        Goal(
            "many-peers",
            many_peers_goal_text(),
            ", ".join(f"{t} {DIRECTIONS[d]}: {fmt_ratio(r)}" for t, d, r in checked),
            all(r >= MANY_PEERS_GOAL for _, _, r in checked),
            MANY_PEERS_BENCH,
            {"transport": worst[0], "direction": worst[1], "peers": MANY_PEERS},
            MANY_PEERS_GOAL / worst[2],
        )
    ]


def section_many_peers(res):
    lines = ["## Many peers", ""]
    rows = many_peers_rows(res)
    if not rows:
        return "\n".join(lines + ["_Not measured in this run (`ManyPeersBenchmark`)._"])
    counts = res.values(MANY_PEERS_BENCH, "peers")
    shapes = res.values(MANY_PEERS_BENCH, "shape")
    out = []
    for transport, direction, cells in rows:
        row = [transport, DIRECTIONS[direction]]
        for n in counts:
            if n in cells:
                r, ratio_ = cells[n]
                b = shape_bytes(shapes[0]) * int(n) if shapes else 0
                baseline = n == counts[0]
                row.append(
                    f"{fmt_ns(r.median)}, {fmt_gbps(b, r.median)}"
                    + ("" if baseline else f" ({fmt_ratio(ratio_)})")
                )
            else:
                row.append("—")
        out.append(row)
    lines += [
        "`ManyPeersBenchmark`: per request one READ of "
        + ", ".join(shape_label(s) for s in shapes)
        + " per peer, every READ posted before any is polled, from one benchmark thread; agents in"
        " one process (NIXL: host memory, UCX over loopback). Each cell: time per request, aggregate"
        " bandwidth, and in brackets the aggregate per byte ÷ a single peer's (n × one peer's time ÷"
        f" n peers' time); goal ≥ {fmt_factor(MANY_PEERS_GOAL)} at {MANY_PEERS} peers.",
        "",
        table(["transport", "direction"] + [f"n = {n}" for n in counts], out),
    ]
    return "\n".join(lines)


def content_check_rows(res, bench):
    """(block, READ, CRC-32C, sampled CRC-32C) for every block size measured, smallest first."""
    rows = []
    for block in res.values(bench + ".", "block"):
        read = res.get(f"{bench}.transportRead", block=block)
        full = res.get(f"{bench}.crc32c", block=block)
        sampled = res.get(f"{bench}.crc32cSampled", block=block)
        if read or full or sampled:
            rows.append((block, read, full, sampled))
    return rows


def content_check_goals(res):
    goals = []
    for family, bench, transport in CONTENT_CHECKS:
        read = res.get(f"{bench}.transportRead", block=CONTENT_CHECK_BLOCK)
        full = res.get(f"{bench}.crc32c", block=CONTENT_CHECK_BLOCK)
        if not read or not full:
            continue
        share = share_of(full, read)
        goals.append(
            Goal(
                family,
                content_check_goal_text(transport),
                f"{fmt_pct(share)} ({fmt_ns(full.median)} vs {fmt_ns(read.median)})",
                share <= CONTENT_CHECK_GOAL,
                f"{bench}.crc32c",
                {"block": CONTENT_CHECK_BLOCK},
                share / CONTENT_CHECK_GOAL,
            )
        )
    return goals


# ---- read planning -----------------------------------------------------------------------------

PLAN = "transfer.PlannerBenchmark.plan"
PLANNED_READ = "transfer.PlannedReadBenchmark.transportRead"
PLAN_PARAMS = ("tp", "consumerBlock", "tokens", "order")
ORDERS = ["HEAD_MAJOR", "BLOCK_MAJOR"]


def order_label(order):
    return order.lower().replace("_", "-")


def plan_goal_text():
    return f"planning < {fmt_limit_pct(PLAN_GOAL)} of the fake transport READ of the same request"


def plan_params(tp, block, tokens, order):
    return {"tp": tp, "consumerBlock": block, "tokens": tokens, "order": order}


def plan_label(params):
    return (
        f"`{params['tp']}`, {params['consumerBlock']}-token consumer blocks,"
        f" {fmt_size(params['tokens'])} tokens, {order_label(params['order'])}"
    )


def plan_read_rows(res):
    """(params, plan Result, READ Result) for every request both planned and read, in order."""
    rows = []
    for order in ORDERS:
        for tp in res.values(PLANNED_READ, "tp"):
            for block in res.values(PLANNED_READ, "consumerBlock"):
                for tokens in res.values(PLANNED_READ, "tokens"):
                    params = plan_params(tp, block, tokens, order)
                    read = res.get(PLANNED_READ, **params)
                    plan = res.get(PLAN, **params)
                    if read and plan:
                        rows.append((params, plan, read))
    return rows


def plan_goals(res):
    rows = plan_read_rows(res)
    if not rows:
        return []
    shares = [(params, share_of(plan, read), plan, read) for params, plan, read in rows]
    worst = max(shares, key=lambda r: r[1])
    params, share, plan, read = worst
    return [
        Goal(
            "read-plan",
            plan_goal_text(),
            f"worst {fmt_pct(share)} ({plan_label(params)}: {fmt_ns(plan.median)} vs"
            f" {fmt_ns(read.median)})",
            all(s < PLAN_GOAL for _, s, _, _ in shares),
            PLAN,
            params,
            share / PLAN_GOAL,
        )
    ]


# ---- a real model's KV at real size -------------------------------------------------------------

REAL = "transfer.RealSizeReadBenchmark"
REAL_PARAMS = ("model", "tp", "tokens")
# The transports of the real-size READ: (transport parameter, family part, name in the report).
REAL_TRANSPORTS = [("FAKE", "fake", "fake"), ("NIXL", "nixl", "NIXL host memory")]
GC_NORM = "gc.alloc.rate.norm"


def real_bandwidth_goal_text(transport):
    return (
        f"real size: READ ≥ {fmt_factor(REAL_SIZE_BANDWIDTH_GOAL)} the bandwidth of one thread"
        f" copying the same bytes, prompts ≥ {fmt_size(REAL_SIZE_MIN_TOKENS)} tokens, {transport}"
    )


def real_plan_goal_text(transport):
    return f"real size: planning ≤ {fmt_limit_pct(REAL_SIZE_PLAN_GOAL)} of the READ, {transport}"


def real_heap_goal_text(transport):
    return (
        "real size: heap bytes per request (planning and READ) O(blocks): bytes per block at the"
        f" longest prompt ≤ {fmt_factor(REAL_SIZE_HEAP_GROWTH)} those at the shortest, {transport}"
    )


def real_choice_goal_text(transport):
    return (
        "real size: the consumer's choice between staged and in-place reads takes ≤"
        f" {fmt_factor(REAL_SIZE_CHOICE_GOAL)} the time of the faster of the two, block-major pairs"
        f" of different TP, {transport}"
    )


def real_check_goal_text(transport):
    return (
        "real size: content check left after the last READ (CRC-32C of the last stage) ≤"
        f" {fmt_limit_pct(REAL_SIZE_CHECK_GOAL)} of the READ at"
        f" {fmt_size(REAL_SIZE_CHECK_TOKENS)} tokens, {transport}"
    )


REAL_GOAL_TEXTS = [
    ("bandwidth", real_bandwidth_goal_text),
    ("plan", real_plan_goal_text),
    ("heap", real_heap_goal_text),
    ("check", real_check_goal_text),
    ("choice", real_choice_goal_text),
]


def real_models(res):
    """The models of the real-size results, in the order the counts list them."""
    found = res.values(REAL + ".", "model")
    listed = list(dict.fromkeys(row["model"] for row in res.real_size_counts.values()))
    return [m for m in listed if m in found] + [m for m in found if m not in listed]


def real_model_label(res, model):
    row = next((r for r in res.real_size_counts.values() if r["model"] == model), None)
    if not row:
        return f"`{model}`"
    return f"{row['name']}, {row['placement'].lower().replace('_', '-')}"


def real_label(res, params):
    return (
        f"{real_model_label(res, params['model'])}, `{params['tp']}`, {fmt_size(params['tokens'])}"
        " tokens"
    )


class RealRow:
    """One real-size request on one transport, with what the report weighs its READ against."""

    def __init__(self, res, model, tp, tokens, transport):
        self.params = {"model": model, "tp": tp, "tokens": tokens}
        self.transport = transport
        carried = dict(self.params, transport=transport)
        # The consumer's own choice (staging AUTO), and reading in place where the run measured it.
        self.read = res.get(f"{REAL}.transportRead", staging="AUTO", **carried)
        self.check = res.get(f"{REAL}.contentCheck", staging="AUTO", **carried)
        self.plan = res.get(f"{REAL}.plan", staging="AUTO", **carried)
        self.in_place = res.get(f"{REAL}.transportRead", staging="NEVER", **carried)
        self.in_place_plan = res.get(f"{REAL}.plan", staging="NEVER", **carried)
        self.all_staged = res.get(f"{REAL}.transportRead", staging="ALWAYS", **carried)
        self.all_staged_plan = res.get(f"{REAL}.plan", staging="ALWAYS", **carried)
        self.copy = res.get(f"{REAL}.copy", **self.params)
        self.counts = res.real_size_counts.get((model, tp, tokens))
        self.chosen = res.real_size_staged.get((model, tp, tokens, transport, "AUTO"))
        self.never = res.real_size_staged.get((model, tp, tokens, transport, "NEVER"))
        self.always = res.real_size_staged.get((model, tp, tokens, transport, "ALWAYS"))

    def staged(self):
        """Whether the consumer read any of the request staged."""
        return bool(self.chosen and self.chosen["staged"])

    def compared(self):
        """Whether the run read this request both in place and staged."""
        return bool(self.in_place and self.all_staged)

    def choice(self):
        """The time of the way the consumer chose (its own trial) ÷ the faster way's."""
        chosen = self.all_staged if self.staged() else self.in_place
        return chosen.median / min(self.in_place.median, self.all_staged.median)

    def bandwidth(self):
        """READ bandwidth ÷ the one-thread copy's bandwidth."""
        return ratio(self.copy, self.read)

    def plan_share(self):
        return share_of(self.plan, self.read)

    def check_share(self):
        return share_of(self.check, self.read)

    def heap(self):
        """Heap bytes a request allocates: planning it and reading it."""
        plan, read = secondary_median(self.plan, GC_NORM), secondary_median(self.read, GC_NORM)
        if plan is None or read is None:
            return None
        return plan + read

    def heap_per_block(self):
        heap = self.heap()
        if heap is None or not self.counts:
            return None
        return heap / self.counts["blocks"]


def real_rows(res, transport=None):
    """Every real-size request READ, by model, prompt length, TP pair and transport."""
    rows = []
    for model in real_models(res):
        for tokens in res.values(REAL + ".", "tokens"):
            for tp in res.values(REAL + ".", "tp"):
                for t, _, _ in REAL_TRANSPORTS:
                    if transport not in (None, t):
                        continue
                    row = RealRow(res, model, tp, tokens, t)
                    if row.read:
                        rows.append(row)
    return rows


def real_size_goals(res):
    goals = []
    for t, part, name in REAL_TRANSPORTS:
        rows = real_rows(res, t)
        if not rows:
            continue
        long_rows = [
            r for r in rows if r.copy and param_order(r.params["tokens"]) >= param_order(REAL_SIZE_MIN_TOKENS)
        ]
        if long_rows:
            worst = min(long_rows, key=lambda r: r.bandwidth())
            b = worst.bandwidth()
            goals.append(
                Goal(
                    f"real-size-{part}-bandwidth",
                    real_bandwidth_goal_text(name),
                    f"worst {fmt_ratio(b)} ({real_label(res, worst.params)}:"
                    f" {real_gbps(worst, worst.read)} vs {real_gbps(worst, worst.copy)})",
                    all(r.bandwidth() >= REAL_SIZE_BANDWIDTH_GOAL for r in long_rows),
                    f"{REAL}.transportRead",
                    dict(worst.params, transport=t, staging="AUTO"),
                    REAL_SIZE_BANDWIDTH_GOAL / b,
                )
            )
        planned = [r for r in rows if r.plan]
        if planned:
            worst = max(planned, key=lambda r: r.plan_share())
            share = worst.plan_share()
            goals.append(
                Goal(
                    f"real-size-{part}-plan",
                    real_plan_goal_text(name),
                    f"worst {fmt_pct(share)} ({real_label(res, worst.params)}:"
                    f" {fmt_ns(worst.plan.median)} vs {fmt_ns(worst.read.median)})",
                    all(r.plan_share() <= REAL_SIZE_PLAN_GOAL for r in planned),
                    f"{REAL}.plan",
                    dict(worst.params, transport=t, staging="AUTO"),
                    share / REAL_SIZE_PLAN_GOAL,
                )
            )
        heap_goal = real_heap_goal(res, rows, part, name)
        if heap_goal:
            goals.append(heap_goal)
        checked = [r for r in rows if r.check and r.params["tokens"] == REAL_SIZE_CHECK_TOKENS]
        if checked:
            worst = max(checked, key=lambda r: r.check_share())
            share = worst.check_share()
            goals.append(
                Goal(
                    f"real-size-{part}-check",
                    real_check_goal_text(name),
                    f"worst {fmt_pct(share)} ({real_label(res, worst.params)}:"
                    f" {fmt_ns(worst.check.median)} vs {fmt_ns(worst.read.median)})",
                    all(r.check_share() <= REAL_SIZE_CHECK_GOAL for r in checked),
                    f"{REAL}.contentCheck",
                    dict(worst.params, transport=t, staging="AUTO"),
                    share / REAL_SIZE_CHECK_GOAL,
                )
            )
        compared = [r for r in rows if r.compared()]
        if compared:
            worst = max(compared, key=lambda r: r.choice())
            c = worst.choice()
            if c > 1:
                measured = f"worst {fmt_ratio(c)} ({real_label(res, worst.params)}: chose"
            else:
                # Every choice the faster way: name the request where the two ways differ most.
                worst = max(compared, key=lambda r: max(ratio(r.in_place, r.all_staged), ratio(r.all_staged, r.in_place)))
                measured = f"the faster way every time (widest gap: {real_label(res, worst.params)}: chose"
            goals.append(
                Goal(
                    f"real-size-{part}-choice",
                    real_choice_goal_text(name),
                    f"{measured} {'staged' if worst.staged() else 'in place'}; in place"
                    f" {fmt_ns(worst.in_place.median)}, staged {fmt_ns(worst.all_staged.median)})",
                    all(r.choice() <= REAL_SIZE_CHOICE_GOAL for r in compared),
                    f"{REAL}.transportRead",
                    dict(worst.params, transport=t, staging="AUTO"),
                    c / REAL_SIZE_CHOICE_GOAL,
                )
            )
    return goals


def real_heap_goal(res, rows, part, name):
    """Per (model, TP pair): heap bytes per block at the longest prompt ÷ at the shortest."""
    by_pair = collections.defaultdict(list)
    for r in rows:
        if r.heap_per_block() is not None:
            by_pair[(r.params["model"], r.params["tp"])].append(r)
    growths = []
    for measured in by_pair.values():
        measured.sort(key=lambda r: param_order(r.params["tokens"]))
        if len(measured) >= 2:
            short, long_ = measured[0], measured[-1]
            growths.append((long_.heap_per_block() / short.heap_per_block(), short, long_))
    if not by_pair:
        return None
    family, text = f"real-size-{part}-heap", real_heap_goal_text(name)
    if not growths:
        most = max((r for rs in by_pair.values() for r in rs), key=lambda r: r.heap_per_block())
        return Goal(
            family,
            text,
            f"at most {fmt_heap(most.heap_per_block())} per block ({real_label(res, most.params)});"
            " one prompt length per request in this run, so no growth measured",
            None,
        )
    growth, short, long_ = max(growths, key=lambda g: g[0])
    return Goal(
        family,
        text,
        f"largest growth {fmt_ratio(growth)} ({real_model_label(res, short.params['model'])},"
        f" `{short.params['tp']}`: {fmt_heap(short.heap_per_block())} per block at"
        f" {fmt_size(short.params['tokens'])} tokens, {fmt_heap(long_.heap_per_block())} at"
        f" {fmt_size(long_.params['tokens'])})",
        all(g <= REAL_SIZE_HEAP_GROWTH for g, _, _ in growths),
        None,
        None,
        growth / REAL_SIZE_HEAP_GROWTH,
    )


def fmt_heap(n):
    """Heap bytes, to three figures."""
    for unit in ("GiB", "MiB", "KiB"):
        if n >= UNITS[unit]:
            return f"{n / UNITS[unit]:.3g} {unit}"
    return f"{n:,.0f} B"


def real_gbps(row, result):
    if not row.counts or not result:
        return fmt_ns(result.median) if result else "—"
    return fmt_gbps(row.counts["bytes"], result.median)


def real_descriptors(row):
    """The descriptors and READs of a request as the consumer read it: its own record of the trial
    where the run kept one (staged READs named), else the in-place plan's counts."""
    if row.chosen:
        staged = f", {row.chosen['stagedReads']} staged" if row.chosen["staged"] else ""
        return f"{fmt_size(row.chosen['descriptors'])} ({row.chosen['reads']}{staged})"
    if row.counts:
        return f"{fmt_size(row.counts['descriptors'])} ({row.counts['reads']})"
    return "—"


def real_choice_lines(res):
    """The block-major pairs of different TP, read in place, staged, and as the consumer chose."""
    rows = [r for r in real_rows(res) if r.compared()]
    if not rows:
        return []
    table_rows = []
    for r in rows:
        table_rows.append(
            [
                real_model_label(res, r.params["model"]),
                fmt_size(r.params["tokens"]),
                f"`{r.params['tp']}`",
                dict((t, n) for t, _, n in REAL_TRANSPORTS)[r.transport],
                fmt_size(r.never["descriptors"]) if r.never else "—",
                f"{fmt_ns(r.in_place.median)}, {real_gbps(r, r.in_place)}",
                fmt_size(r.always["descriptors"]) if r.always else "—",
                fmt_heap(r.always["bytesMoved"]) if r.always else "—",
                f"{fmt_ns(r.all_staged.median)}, {real_gbps(r, r.all_staged)}",
                fmt_ratio(ratio(r.in_place, r.all_staged)),
                f"{fmt_ns(r.in_place_plan.median)} → {fmt_ns(r.all_staged_plan.median)}"
                if r.in_place_plan and r.all_staged_plan
                else "—",
                "staged" if r.staged() else "in place",
                fmt_ratio(r.choice()) if r.choice() > 1 else "the faster",
                verdict(r.choice() <= REAL_SIZE_CHOICE_GOAL),
            ]
        )
    lines = [
        "### Staged against in place",
        "",
        "Where both sides are block-major and their TP differs, a consumer rank's heads of one token"
        " are a piece of their own in place. The consumer may instead read the producer's slabs whole"
        " (one descriptor per block, layer and plane) into a staging area registered beside its KV"
        " memory and copy each token's heads into place once a stage's READs are done"
        " (`kvbridge.consumer.staging`, README \"Staged reads between different TP\"); `auto`, the"
        " default, chooses by the cost model below. The same requests read each way in trials of"
        " their own: in place (`staging=NEVER`) and staged (`staging=ALWAYS`, every staged READ"
        " into staging memory of its own size, its copies inside the READ's time); bandwidth is the"
        " bytes the consumer needs over the time. The consumer's choice is the way `staging=AUTO`"
        " read it in the main table. Goal: the way chosen takes at most"
        f" {fmt_factor(REAL_SIZE_CHOICE_GOAL)} the time of the faster way. A request the run did"
        " not read both ways has no row (a staged trial stages each READ whole into one memory of"
        " its own, which the fake cannot allocate past its largest size).",
        "",
        table(
            [
                "model",
                "tokens",
                "tp",
                "transport",
                "in place: descriptors",
                "in place: READ",
                "staged: descriptors",
                "staged: bytes moved",
                "staged: READ",
                "in place ÷ staged",
                "plan: in place → staged",
                "consumer's choice",
                "chosen ÷ faster",
                "result",
            ],
            table_rows,
        ),
        "",
    ]
    return lines + real_cost_model_lines(res)


def real_cost_model_lines(res):
    """The figures each transport's model used, beside what this run measured of the same."""
    rows = []
    for t, _, name in REAL_TRANSPORTS:
        used = next((v for k, v in res.real_size_staged.items() if k[3] == t and k[4] == "AUTO"), None)
        if not used:
            continue
        per_byte = per_descriptor = None
        split = [r for r in real_rows(res, t) if r.compared() and r.never and r.counts]
        if split:
            longest = max(split, key=lambda r: param_order(r.params["tokens"]))
            # The same model and prompt read in the fewest descriptors per byte: between equal TP,
            # whole extents.
            alike = [
                r
                for r in real_rows(res, t)
                if r.params["model"] == longest.params["model"]
                and r.params["tokens"] == longest.params["tokens"]
                and r.counts
            ]
            same = min(alike, key=lambda r: r.counts["descriptors"] / r.counts["bytes"], default=None)
            if same:
                per_byte = same.read.median / same.counts["bytes"]
                rest = longest.in_place.median - per_byte * longest.counts["bytes"]
                per_descriptor = max(0.0, rest / longest.never["descriptors"])
        rows.append(
            [
                name,
                f"{used['readNanosPerDescriptor']:,.0f} ns, {used['readNanosPerByte']:.3f} ns",
                f"{per_descriptor:,.0f} ns" if per_descriptor is not None else "—",
                f"{per_byte:.3f} ns" if per_byte is not None else "—",
                f"{used['copyNanosPerCopy']:,.0f} ns, {used['copyNanosPerRow']:,.1f} ns,"
                f" {used['copyNanosPerByte']:.3f} ns",
            ]
        )
    if not rows:
        return []
    return [
        "The cost model stages a pair when `read(staged descriptors, staged bytes) + copy(copies,"
        " rows, bytes) < read(in-place descriptors, bytes)`: the transport's cost per descriptor and"
        " per byte (`Transport.readCost()`, the figures its backend declares) and the copy's per"
        " call, row and byte, measured on the staging memory when the consumer allocates it. Beside"
        " them, what this run measured of the same transport: per byte, the READ of the model and prompt"
        " of the longest in-place READ of different TP in the fewest descriptors per byte (equal TP,"
        " whole extents), over its bytes; per descriptor, what that in-place READ took beyond its"
        " bytes, over its descriptors.",
        "",
        table(
            [
                "transport",
                "declared: per descriptor, per byte",
                "measured: per descriptor",
                "measured: per byte",
                "copy, measured by the consumer: per call, per row, per byte",
            ],
            rows,
        ),
        "",
    ]


def section_real_size(res):
    s = res.settings.get("realSize") or {}
    lines = [
        "## A real model's KV at real size",
        "",
        "One request of a real model's KV in the memory an engine serving it keeps it in,"
        " `io.kvbridge.benchmarks.transfer.RealSizeReadBenchmark` (JMH options"
        f" `{res.run.get('real_size_options') or '?'}`, with JMH's GC profiler): each model in its"
        " placement (the model column), block-major,"
        f" {fmt_setting(s.get('tokensPerBlock'))}-token blocks on both sides. `tp` is `PxD`: P"
        " producer ranks, D consumer ranks. Each side's pool holds exactly the prompt's blocks, handed"
        " out scattered; each rank's pool lies in its layout's regions (one per layer), every region"
        " registered with the rank's agent, and the planner's descriptors (`ReadPlan.of`) are"
        " resolved through each rank's `KvRegions`. All from the same run, each in its own trial:",
        "",
        "- **READ** — every READ of the plan the consumer makes (staged where its cost model says,"
        " see below) posted with its descriptors (lists built once, outside the timing), each polled,"
        " spinning, until DONE, a staged one's rows then copied into place, then released; bandwidth"
        " is the bytes the consumer needs (`io.kvbridge.benchmarks.transfer.RealSizeCounts`) over"
        " the time per request.",
        "- **copy** — the same bytes copied by one thread, region to region, one bulk"
        " `ByteBuffer.put` per region of the consumer's shape, heap to heap (`RegionCopy`).",
        "- **plan** — `ReadPlan.of` for the request, with the consumer's staging model.",
        "- **check** — the content check left once the last READ finished: the consumer posts a"
        " long read in stages of consecutive blocks, each its own READs (`ReadPlan.stageBounds`:"
        " `MAX_STAGES` at most, the last two a half and a quarter of the others, the last of"
        " `MIN_STAGE_BYTES` at least), and checks each stage while later"
        " ones still move, so what is left is the CRC-32C of the last stage's blocks, over the"
        " bytes their tokens occupy, in place (`BlockChecksums`, as the consumer's load check"
        " does). A short request is one stage: its whole check.",
        "- **heap** — bytes allocated per request by planning it and reading it"
        f" (`{GC_NORM}` of the two), and that per block of the prompt.",
        "",
    ]
    rows = []
    for r in real_rows(res):
        applies_bw = param_order(r.params["tokens"]) >= param_order(REAL_SIZE_MIN_TOKENS)
        applies_check = r.params["tokens"] == REAL_SIZE_CHECK_TOKENS
        verdicts = []
        if r.copy and applies_bw:
            verdicts.append(r.bandwidth() >= REAL_SIZE_BANDWIDTH_GOAL)
        if r.plan:
            verdicts.append(r.plan_share() <= REAL_SIZE_PLAN_GOAL)
        if r.check and applies_check:
            verdicts.append(r.check_share() <= REAL_SIZE_CHECK_GOAL)
        heap, per_block = r.heap(), r.heap_per_block()
        rows.append(
            [
                real_model_label(res, r.params["model"]),
                fmt_size(r.params["tokens"]),
                f"`{r.params['tp']}`",
                dict((t, n) for t, _, n in REAL_TRANSPORTS)[r.transport],
                real_descriptors(r),
                f"{fmt_ns(r.read.median)}{r.read.spread()}, {real_gbps(r, r.read)}",
                f"{fmt_ns(r.copy.median)}{r.copy.spread()}, {real_gbps(r, r.copy)}" if r.copy else "—",
                fmt_ratio(r.bandwidth()) + (f" (≥ {fmt_factor(REAL_SIZE_BANDWIDTH_GOAL)})" if applies_bw else ""),
                f"{fmt_ns(r.plan.median)}, {fmt_pct(r.plan_share())}" if r.plan else "—",
                f"{fmt_ns(r.check.median)}, {fmt_pct(r.check_share())}" if r.check else "—",
                f"{fmt_heap(heap)}, {fmt_heap(per_block)}/block" if per_block is not None else "—",
                verdict(all(verdicts)) if verdicts else "—",
            ]
        )
    if not rows:
        lines.append(NO_RESULTS)
    else:
        lines += [
            "Goals: READ ≥"
            f" {fmt_factor(REAL_SIZE_BANDWIDTH_GOAL)} the copy's bandwidth at ≥"
            f" {fmt_size(REAL_SIZE_MIN_TOKENS)} tokens; plan ≤ {fmt_limit_pct(REAL_SIZE_PLAN_GOAL)} of"
            f" the READ; check ≤ {fmt_limit_pct(REAL_SIZE_CHECK_GOAL)} of the READ at"
            f" {fmt_size(REAL_SIZE_CHECK_TOKENS)} tokens; heap per block not growing with the prompt"
            f" (≤ {fmt_factor(REAL_SIZE_HEAP_GROWTH)} from the shortest prompt to the longest, in"
            " the Goals table). The result column is the verdict of the goals that apply to the row.",
            "",
            table(
                [
                    "model",
                    "tokens",
                    "tp",
                    "transport",
                    "descriptors (READs)",
                    "READ (time, bandwidth)",
                    "copy (time, bandwidth)",
                    "READ ÷ copy",
                    "plan (time, ÷ READ)",
                    "check (time, ÷ READ)",
                    "heap per request, per block",
                    "result",
                ],
                rows,
            ),
            "",
            "Reproduce a row: `java -jar benchmarks/target/benchmarks.jar"
            f" 'RealSizeReadBenchmark' {res.run.get('real_size_options') or ''} -prof gc -p model=M"
            " -p tp=PxD -p tokens=N -p transport=T -p staging=AUTO` (the NIXL rows need what the NIXL"
            " section's Java side needs, and `-jvmArgsAppend` repeats the fork's heap, as"
            " `benchmarks/run.sh` does).",
            "",
        ]
        lines += real_choice_lines(res)
        lines += [
            "Missed goals are profiled with JFR like the others, except the heap goal: JFR's execution"
            " samples do not say where a request allocates; `-prof gc` on the row shows the bytes.",
        ]
    if not res.has(f"{REAL}.transportRead") or not any(r.transport == "NIXL" for r in real_rows(res)):
        if res.run.get("nixl_status"):
            lines += ["", "No NIXL rows in this run: " + res.run["nixl_status"]]
    return "\n".join(lines)


# ---- tracing off -------------------------------------------------------------------------------

TRACING_OFF = "observe.TracingOffBenchmark.spansOfOneRequest"


def tracing_off_goal_text():
    return (
        f"tracing off: one request's span calls ≤ {fmt_limit_pct(TRACING_OFF_GOAL)} of the fake"
        f" transport's {shape_label(TRACING_OFF_SHAPE)} READ"
    )


def tracing_off_goals(res):
    spans = res.find(TRACING_OFF)
    read = res.get("transfer.FakeReadBenchmark.transportRead", shape=TRACING_OFF_SHAPE)
    if not spans or not read:
        return []
    share = share_of(spans, read)
    return [
        Goal(
            "tracing-off",
            tracing_off_goal_text(),
            f"{fmt_pct(share)} ({fmt_ns(spans.median)} vs {fmt_ns(read.median)})",
            share <= TRACING_OFF_GOAL,
            TRACING_OFF,
            {},
            share / TRACING_OFF_GOAL,
        )
    ]


# ---- the request path under load ---------------------------------------------------------------

REQUEST_PATH_NODES = [("prefill", "P"), ("decode", "D"), ("router", "router")]


def request_path_goal_text(older="the older build"):
    return (
        "request path (P, D and the router as separate JVMs, fake connector, every check on):"
        f" answers per second ≥ {fmt_factor(REQUEST_PATH_GOAL)} {older}'s, same run, interleaved"
    )


def request_path_summary(doc):
    """Per build: the median answers per second over its windows and the CPU milliseconds per
    answered request of each node over all its windows."""
    out = {}
    for build in doc["builds"]:
        windows = [w for w in doc["windows"] if w["build"] == build]
        if not windows:
            return None
        answered = sum(w["answered"] for w in windows)
        out[build] = {
            "rate": statistics.median(w["answered"] / w["seconds"] for w in windows),
            "p50": statistics.median(w["p50_ns"] for w in windows),
            "cpu": {
                node: sum(w["cpu_ms"][node] for w in windows) / max(answered, 1)
                for node, _ in REQUEST_PATH_NODES
            },
            "failures": sum(sum(w["failures"].values()) for w in windows),
        }
    return out


def request_path_goals(res):
    doc = res.request_path
    summary = request_path_summary(doc) if doc else None
    if not summary:
        return []
    this, older = doc["builds"][0], doc["builds"][1]
    r = summary[this]["rate"] / summary[older]["rate"]
    cpu = ", ".join(
        f"{label} {summary[this]['cpu'][node]:.2f} vs {summary[older]['cpu'][node]:.2f} ms"
        for node, label in REQUEST_PATH_NODES
    )
    # A wrong answer stops the run itself (RequestPathRun exits non-zero), so the goal is the rate.
    ok = r >= REQUEST_PATH_GOAL
    return [
        Goal(
            "request-path",
            request_path_goal_text(f"`{older}`"),
            f"{fmt_ratio(r)} ({summary[this]['rate']:.1f} vs {summary[older]['rate']:.1f} answers/s,"
            f" medians over each build's windows); CPU per answered request: {cpu}",
            ok,
            badness=REQUEST_PATH_GOAL / max(r, 1e-9),
        )
    ]


def section_request_path(res):
    doc = res.request_path
    lines = ["## The request path under load: this build against an older one", ""]
    summary = request_path_summary(doc) if doc else None
    if not summary:
        return "\n".join(lines + ["Not measured in this run (`benchmarks/request-path.sh` did not run)."])
    this, older = doc["builds"][0], doc["builds"][1]
    lines += [
        f"`benchmarks/request-path.sh` runs this build's sample app and `{older}`'s, each as a prefill"
        " node, a decode node and a router in separate JVMs (`" + doc["jvm_options"] + "`) on the fake"
        " connector over a shared directory, as `docs/sample.md` starts them, with every check on."
        f" {doc['clients']} closed-loop clients send completions to the router, each prompt new"
        f" ({doc['prompt_bytes_min']}–{doc['prompt_bytes_max']} tokens, {doc['max_tokens']} tokens"
        f" generated), so no prefix cache serves one build more than the other. Each window is"
        f" {doc['warmup_s']} s of warm-up, then {doc['measure_s']} s measured; builds take turns in"
        " alternating order. CPU is each process's user and system time over the measured window"
        " (`/proc/<pid>/stat`), divided by the answers of that window. The clients' own JVM shares"
        " the machine.",
        "",
        table(
            ["round", "build", "answers/s", "p50", "p99", "failed", "CPU per answer: P", "D", "router"],
            [
                [
                    str(w["round"]),
                    f"`{w['build']}`",
                    f"{w['answered'] / w['seconds']:.1f}",
                    fmt_ns(w["p50_ns"]),
                    fmt_ns(w["p99_ns"]),
                    str(sum(w["failures"].values())),
                ]
                + [f"{w['cpu_ms'][node] / max(w['answered'], 1):.2f} ms" for node, _ in REQUEST_PATH_NODES]
                for w in doc["windows"]
            ],
        ),
        "",
        table(
            ["build", "median answers/s", "median p50", "CPU per answer: P", "D", "router", "all three"],
            [
                [f"`{b}`", f"{summary[b]['rate']:.1f}", fmt_ns(summary[b]["p50"])]
                + [f"{summary[b]['cpu'][node]:.2f} ms" for node, _ in REQUEST_PATH_NODES]
                + [f"{sum(summary[b]['cpu'].values()):.2f} ms"]
                for b in (this, older)
            ],
        ),
        "",
        f"Answers checked: {doc['answers_compared']} fixed prompts, each answered through P and D and"
        f" by the decode node computing it alone, per build; {doc['answers_differing']} differed.",
    ]
    profiles = []
    for build in (this, older):
        for node, label in REQUEST_PATH_NODES:
            prof = read_json(os.path.join(res.dir, "jfr", f"request-path-{build}-{node}.json"))
            if prof and prof.get("threads"):
                threads = ", ".join(f"{t} {s:.0f}%" for t, s in prof["threads"][:4])
                profiles.append([f"`{build}`", label, str(prof["samples"]), threads])
    if profiles:
        lines += [
            "",
            "JFR profiles of one more window per build (profile settings, measured window only;"
            " summaries in `jfr/request-path-<build>-<node>.json`):",
            "",
            table(["build", "node", "samples", "samples per thread"], profiles),
        ]
    return "\n".join(lines)


def all_goals(res):
    goals = (
        lease_goals(res)
        + churn_goals(res)
        + fake_goals(res)
        + nixl_goals(res)
        + prepared_goals(res)
        + many_peers_goals(res)
        + gpu_goals(res)
        + content_check_goals(res)
        + plan_goals(res)
        + real_size_goals(res)
        + tracing_off_goals(res)
        + request_path_goals(res)
        + pd_path_goals(res)
        + ttft_goals(res)
        + routing_goals(res)
    )
    families = {g.family for g in goals}
    expected = [
        ("lease-sweep", sweep_goal_text(), NOT_MEASURED),
        ("lease-churn-alloc", churn_goal_text(), NOT_MEASURED),
        ("fake-read", fake_goal_text(), NOT_MEASURED),
        ("nixl-read", nixl_goal_text(), NOT_MEASURED),
        ("nixl-prepared-overhead", prepared_overhead_goal_text(), NOT_MEASURED),
        ("nixl-prepared-bandwidth", prepared_bandwidth_goal_text(), NOT_MEASURED),
    ] + [
        (family, content_check_goal_text(transport), NOT_MEASURED)
        for family, _, transport in CONTENT_CHECKS
    ] + [
        ("many-peers", many_peers_goal_text(), NO_MANY_PEERS_BENCHMARK),
        ("gpu-path", gpu_goal_text(), NO_GPU_CHECK),
        ("read-plan", plan_goal_text(), NOT_MEASURED),
    ] + [
        (f"real-size-{part}-{kind}", text(name), NOT_MEASURED)
        for _, part, name in REAL_TRANSPORTS
        for kind, text in REAL_GOAL_TEXTS
    ] + [
        ("tracing-off", tracing_off_goal_text(), NOT_MEASURED),
        ("request-path", request_path_goal_text(), NOT_MEASURED),
    ] + [
        (f"pd-path-{connector}", pd_path_goal_text(connector), NOT_MEASURED)
        for connector in ["fake", "nixl"]
    ] + [
        (f"ttft-{kind}-{connector}", text(connector), NOT_MEASURED)
        for connector in ["fake", "nixl"]
        for kind, text in TTFT_GOAL_TEXTS
    ] + [
        ("routing-share", routing_share_goal_text(), NOT_MEASURED),
        ("routing-decision", routing_decision_goal_text(), NOT_MEASURED),
        ("routing-recovery", routing_recovery_goal_text(), NOT_MEASURED),
    ]
    for family, text, why in expected:
        if family not in families:
            goals.append(Goal(family, text, why, None))
    return goals


# ---- sections ----------------------------------------------------------------------------------


def jmh_command(res, regex, params):
    opts = res.run.get("jmh_options", "")
    args = " ".join(f"-p {k}={v}" for k, v in params.items())
    return f"java -jar benchmarks/target/benchmarks.jar '{regex}' {opts} {args}".strip()


def section_machine(res):
    lines = ["## Machine and settings", ""]
    m = res.machine_start or {}
    e = res.entries[0] if res.entries else {}
    lines.append(
        table(
            ["", ""],
            [
                ["CPU", f"{m.get('cpus', '?')} cores ({m.get('cpu_model', '?')})"],
                ["Memory", f"{m.get('mem_total_gib', '?')} GiB"],
                ["OS", m.get("os", "?")],
                ["JDK", f"{e.get('jdkVersion', '?')} — {e.get('vmName', '?')} {e.get('vmVersion', '')}"],
                ["JMH", f"{e.get('jmhVersion', '?')}; {res.run.get('jmh_options', '?')}"],
                [
                    "Load average (last minute) at start / end",
                    f"{m.get('load_1min', '?')} / {(res.machine_end or {}).get('load_1min', '?')}",
                ],
                ["Run", f"{res.run.get('started', '?')}, {res.run.get('minutes', '?')} min"],
            ],
        )
    )
    lines += [
        "",
        "The machine is shared with builds of other modules, so absolute times drift between runs;"
        " every comparison runs both sides in the same run, and each cell is the **median** of the"
        " measurement iterations (min–max in brackets where there is more than one). Ratios are"
        " ratios of medians. Performance is never asserted in tests.",
    ]
    return "\n".join(lines)


def section_summary(goals):
    lines = ["## Goals", ""]
    if not goals:
        return "\n".join(lines + ["No results."])
    lines.append(
        table(
            ["Goal", "Measured", "Result"],
            [[g.text, g.measured, verdict(g.ok)] for g in goals],
        )
    )
    return "\n".join(lines)


def lease_compare_table(res, name, subject_goal=None):
    rows = []
    for n in res.values(name, "liveLeases"):
        cells = {b: res.get(name, book=b, liveLeases=n) for b in BOOKS}
        if not any(cells.values()):
            continue
        t = cells["TABLE"]
        row = [fmt_size(n)]
        row += [fmt_ns(cells[b].median) + cells[b].spread() if cells[b] else "—" for b in BOOKS]
        row += [fmt_ratio(ratio(cells["INSERTION_ORDERED"], t)), fmt_ratio(ratio(cells["FULL_SCAN"], t))]
        if subject_goal:
            text, check = subject_goal(n, cells)
            row += [text, verdict(check)]
        rows.append(row)
    header = ["live leases"] + [BOOK_NAMES[b] for b in BOOKS] + ["(a) ÷ LeaseTable", "(b) ÷ LeaseTable"]
    if subject_goal:
        header += ["goal", "result"]
    return table(header, rows) if rows else NO_RESULTS


def section_lease(res):
    expired = fmt_setting(res.setting("lease", "expiredPerSweep"))
    batch = fmt_setting(res.setting("lease", "leasesPerTimedBatch"))
    lines = [
        "## Lease bookkeeping",
        "",
        "`io.kvbridge.lease.LeaseTable` (hash index + binary heap of deadlines) against two"
        " baselines written for the comparison in `io.kvbridge.benchmarks.lease`, all over a"
        " `ManualClock`, with the same work per lease: a `SecureRandom` token, a constant-time token"
        " check, a deadline capped by the maximum lifetime, a `LeaseEnd` snapshot per lease a sweep"
        " ends, one lock per call.",
        "",
        "- **(a) insertion-ordered** (`InsertionOrderedLeaseBook`): a `LinkedHashMap` in grant order,"
        " swept from the head until the first unexpired lease — vLLM's producer-side approach."
        " **It is only correct without renewals**: a renewal moves a deadline later but not the lease,"
        " so a renewed lease at the head hides expired leases behind it"
        " (`LeaseBookTest.withRenewalsAnInsertionOrderedSweepMissesAnExpiredLeaseBehindARenewedOne`;"
        " the same test passes for LeaseTable and the full scan). Its sweep numbers are therefore a"
        " lower bound that no correct design with heartbeats can use.",
        "- **(b) full scan** (`FullScanLeaseBook`): a `HashMap` whose sweep looks at every live lease —"
        " what a sweep must do once renewals reorder deadlines and there is no deadline index.",
        "",
        "Ratios are *baseline time ÷ LeaseTable time*: above one LeaseTable is cheaper, below one it"
        " is dearer. Leases are granted one lease-duration ÷ n apart, so the population spans one lease"
        f" duration ({fmt_setting(res.setting('lease', 'leaseDurationSeconds'), unit=' s')}).",
        "",
        "### Sweep that finds nothing due (idle sweep)",
        "",
        lease_compare_table(
            res,
            "lease.LeaseBookBenchmark.sweepIdle",
            lambda n, c: (
                (f"≥ {fmt_factor(IDLE_SWEEP_GOAL)} vs (b)", ratio(c["FULL_SCAN"], c["TABLE"]) >= IDLE_SWEEP_GOAL)
                if n == IDLE_SWEEP_SIZE and c["FULL_SCAN"] and c["TABLE"]
                else ("—", None)
            ),
        ),
        "",
        f"### Sweep that finds {expired} expired leases",
        "",
        f"Before each timed sweep (untimed) {expired} new leases are granted one spacing apart, so"
        f" exactly the {expired} oldest are due and the population stays at n; after it (untimed) the"
        " benchmark checks those ended.",
        "",
        lease_compare_table(res, "lease.LeaseSweepBenchmark.sweepExpired"),
        "",
        "### Grant + acknowledge (one lease granted, confirmed, then read-acknowledged; population stays at n)",
        "",
        lease_compare_table(
            res,
            "lease.LeaseBookBenchmark.grantAndAcknowledge",
            lambda n, c: (
                f"< {fmt_limit_ns(2 * PER_OP_GOAL_NS)} ({fmt_limit_ns(PER_OP_GOAL_NS)} each)",
                c["TABLE"].median < 2 * PER_OP_GOAL_NS,
            )
            if c["TABLE"]
            else ("—", None),
        ),
        "",
        "### Grant and acknowledge timed apart (LeaseTable only)",
        "",
        f"Batches of {batch} per timed invocation; the other half of the pair runs untimed around it.",
        "",
    ]
    rows = []
    for n in res.values("lease.LeaseTableOpsBenchmark.", "liveLeases"):
        g = res.get("lease.LeaseTableOpsBenchmark.grant", liveLeases=n)
        a = res.get("lease.LeaseTableOpsBenchmark.acknowledge", liveLeases=n)
        if g or a:
            rows.append(
                [
                    fmt_size(n),
                    (fmt_ns(g.median) + g.spread()) if g else "—",
                    verdict(g.median < PER_OP_GOAL_NS) if g else "—",
                    (fmt_ns(a.median) + a.spread()) if a else "—",
                    verdict(a.median < PER_OP_GOAL_NS) if a else "—",
                ]
            )
    per_op = f"< {fmt_limit_ns(PER_OP_GOAL_NS)}"
    lines.append(
        table(["live leases", "grant", per_op, "acknowledge", per_op], rows) if rows else NO_RESULTS
    )
    lines += [
        "",
        "### Renew (heartbeat)",
        "",
        "Heartbeats visit live leases in grant order while the clock moves half a spacing each, so"
        " every renewal really extends a deadline: in LeaseTable it sifts the soonest lease down the"
        " heap; in the baselines it updates a field in place (which is what breaks (a)).",
        "",
        lease_compare_table(
            res,
            "lease.LeaseBookBenchmark.renew",
            lambda n, c: (per_op, c["TABLE"].median < PER_OP_GOAL_NS) if c["TABLE"] else ("—", None),
        ),
        "",
        "Reproduce one table, e.g.: `"
        + jmh_command(res, "LeaseBookBenchmark.sweepIdle", {"liveLeases": IDLE_SWEEP_SIZE})
        + "`",
    ]
    return "\n".join(lines)


def transfer_table(res, bench, goal, baseline_col, subject_col, extra=None):
    """Per shape: the raw copy, the transport READ, their ratio and the goal; with {@code extra}
    (method, column title) one more READ variant and its ratio to the raw copy."""
    rows = []
    for shape in res.values(f"transfer.{bench}.", "shape"):
        base = res.get(f"transfer.{bench}.rawCopy", shape=shape)
        subj = res.get(f"transfer.{bench}.transportRead", shape=shape)
        if not base and not subj:
            continue
        b = shape_bytes(shape)
        r = ratio(base, subj)
        applies = shape_block(shape) >= block_bytes(FAKE_GOAL_MIN_BLOCK)
        row = [
            shape_label(shape),
            fmt_bytes(b),
            f"{fmt_ns(base.median)}{base.spread()}, {fmt_gbps(b, base.median)}" if base else "—",
            f"{fmt_ns(subj.median)}{subj.spread()}, {fmt_gbps(b, subj.median)}" if subj else "—",
            fmt_ratio(r),
            f"≥ {fmt_factor(goal)}" if applies else "—",
            verdict(r >= goal) if applies and r is not None else "—",
        ]
        if extra:
            alt = res.get(f"transfer.{bench}.{extra[0]}", shape=shape)
            row += [
                f"{fmt_ns(alt.median)}{alt.spread()}, {fmt_gbps(b, alt.median)}" if alt else "—",
                fmt_ratio(ratio(base, alt)),
            ]
        rows.append(row)
    header = ["block × blocks", "bytes/request", baseline_col, subject_col, "bandwidth ratio", "goal", "result"]
    if extra:
        header += [extra[1], "its ratio"]
    return table(header, rows) if rows else NO_RESULTS


def example_shape(res, bench, goal_family, goals):
    """The shape a reproduce line names: the worst case of the goal, else the largest measured."""
    for g in goals:
        if g.family == goal_family and "shape" in g.params:
            return g.params["shape"]
    shapes = res.values(f"transfer.{bench}.", "shape")
    return shapes[-1] if shapes else None


def reproduce(command_for, shape):
    return "" if shape is None else "Reproduce: `" + command_for(shape) + "`"


def section_fake(res, goals):
    park = fmt_setting(res.setting("transfer", "parkNanos"), 1e3, " µs")
    cap = res.setting("transfer", "maxRequestBytes")
    cpus = (res.machine_start or {}).get("cpus", "?")
    shape = example_shape(res, "FakeReadBenchmark", "fake-read", goals)
    return "\n".join(
        [
            "## Transfer bandwidth on the fake connector",
            "",
            "A decode agent READs a prefill agent's blocks through the `fake` connector's transport"
            " (two agents on one `FakeFabric`: an `AgentCore` over `io.kvbridge.fake.FakeBackend`;"
            " post → poll `status` until DONE → release; the fabric"
            " copies on its executor thread, as the `fake` connector does), against a raw copy of the"
            " same bytes out of the same prefill region: one `ByteBuffer` bulk put per block into a heap"
            " buffer of the decode region's size. Both regions are heap `ByteBuffer`s (what the fake"
            " allocates). One descriptor per block, blocks back to back, at most"
            f" {fmt_bytes(cap) if cap else fmt_setting(cap)} per request."
            " The ratio is transport bandwidth ÷ raw copy bandwidth (= raw time ÷ transport time).",
            "",
            "The goal is checked on the READ whose caller spins on `status` (as the NIXL comparison"
            " does on both sides). The last two columns repeat the READ with the caller parking"
            f" {park} between polls: the difference shows how much of the gap comes from the poller"
            f" competing with the fabric's copier thread for the cores ({cpus} on this machine);"
            " `status` itself reads the transfer's state without taking the copy lock.",
            "",
            transfer_table(
                res, "FakeReadBenchmark", FAKE_GOAL,
                "raw copy (time, bandwidth)", "fake READ, spinning poll (time, bandwidth)",
                ("transportReadParked", "fake READ, parked poll"),
            ),
            "",
            reproduce(lambda s: jmh_command(res, "FakeReadBenchmark", {"shape": s}), shape),
        ]
    )


def section_nixl(res, goals):
    lines = ["## Transfer bandwidth and latency on NIXL", ""]
    rows = nixl_rows(res)
    python = res.nixl_python or {}
    if not rows:
        lines += [
            "> **Placeholder — not measured in this run.** "
            + (
                res.run.get("nixl_status")
                or "The NIXL benchmarks ran but produced no comparable result; see"
                " `benchmarks/target/results/jmh-nixl.log`."
            ),
            "",
            "Plan, as it runs where the NIXL libraries are available: the same READ pattern and"
            " shapes as the fake connector's section through `connector-nixl`'s transport (host"
            " memory, UCX backend, two agents in one JVM; JMH class"
            " `io.kvbridge.benchmarks.transfer.NixlReadBenchmark`, reusing `ReadPair`), and the same"
            " pattern with NIXL's own Python binding from the same wheel"
            " (`benchmarks/python/nixl_read_bench.py`, run from a venv under `benchmarks/target/`"
            " holding only the `nixl-cu13` wheel installed with `--no-deps` and `numpy`, the one"
            " module the binding imports; no torch). The report then shows, per shape, both"
            " bandwidths and their ratio against the goal **≥"
            f" {fmt_factor(NIXL_BANDWIDTH_GOAL)} of the Python binding**, and the per-request time of"
            f" {shape_label(NIXL_OVERHEAD_SHAPE)} against **no worse than the Python binding**.",
        ]
        if python:
            lines += ["", "Python binding alone, measured in this run (" + python["binding"] + "):", ""]
            lines.append(
                table(
                    ["block × blocks", "time/request", "bandwidth"],
                    [
                        [shape_label(r["shape"]), fmt_ns(r["us_per_request"] * 1e3), f"{r['gbps']:.2f} GB/s"]
                        for r in python["results"]
                    ],
                )
            )
        return "\n".join(lines)
    out = []
    for shape, p, j in rows:
        b = shape_bytes(shape)
        pn = p["us_per_request"] * 1e3
        r = pn / j.median
        out.append(
            [
                shape_label(shape),
                f"{fmt_ns(pn)}, {fmt_gbps(b, pn)}",
                f"{fmt_ns(j.median)}{j.spread()}, {fmt_gbps(b, j.median)}",
                fmt_ratio(r),
                f"≥ {fmt_factor(NIXL_BANDWIDTH_GOAL)}",
                verdict(r >= NIXL_BANDWIDTH_GOAL),
            ]
        )
    rounds = python.get("rounds")
    timing = (
        f"median of {rounds} rounds of {fmt_setting(python.get('round_seconds'), unit=' s')} after a"
        f" {fmt_setting(python.get('warmup_seconds'), unit=' s')} warm-up"
        if rounds is not None
        else "median of its timed rounds (the run recorded no round settings)"
    )
    shape = example_shape(res, "NixlReadBenchmark", "nixl-read", goals)
    lines += [
        "The same READ pattern and shapes as the fake connector's section, host memory, UCX backend,"
        " two agents in one process, with the same UCX environment on both sides"
        f" (`UCX_TLS={python['machine'].get('ucx_tls') or 'default'}`):",
        "",
        "- **kvbridge NIXL** — the `nixl` connector's transport, an `AgentCore` over"
        " `io.kvbridge.nixl.NixlBackend` (`NixlReadBenchmark`, JMH), the"
        " connector's default options but `nixl.memory=dram`: per request `post` (pairing and"
        " registration checks, `nixl_capi_check_remote_md`, a transfer request created from the two"
        " descriptor lists, posted), `status` polled until DONE, `release`.",
        f"- **Python binding** — {python['binding']} from the same wheel"
        " (`benchmarks/python/nixl_read_bench.py`, mode"
        f" `{python.get('mode', '?')}`): per request `initialize_xfer` from two descriptor"
        " lists built once, `transfer`, `check_xfer_state` until DONE, `release_xfer_handle`;"
        f" {timing}.",
        "",
        "Ratio: kvbridge bandwidth ÷ Python binding bandwidth (= Python time ÷ kvbridge time).",
        "",
        table(
            ["block × blocks", "Python binding", "kvbridge NIXL", "ratio", "goal", "result"], out
        ),
        "",
        "Reproduce the Java side: `UCX_TLS=self,sm,tcp UCX_NET_DEVICES=lo "
        + jmh_command(res, "NixlReadBenchmark", {"shape": shape})
        + " -jvmArgsAppend '-Xms1g -Xmx1g -Dkvbridge.nixl.home=connector-nixl/target/nixl/lib'`;"
        " the Python side: `UCX_TLS=self,sm,tcp UCX_NET_DEVICES=lo benchmarks/target/nixl-venv/bin/python"
        " benchmarks/python/nixl_read_bench.py --out nixl-python.json`.",
    ]
    return "\n".join(lines)


def section_nixl_prepared(res):
    lines = ["### From prepared descriptor lists, interleaved with the Python binding", ""]
    rows = prepared_rows(res)
    if not rows:
        lines.append(
            "_Not measured in this run: it needs the NIXL libraries and the Python binding's venv"
            " (`benchmarks/run.sh` passes them to `NixlPreparedReadBenchmark` as system properties)._"
        )
        return "\n".join(lines)
    out = []
    for shape, p, j in rows:
        b = shape_bytes(shape)
        r = p / j.median
        out.append(
            [
                shape_label(shape),
                f"{fmt_ns(p)}, {fmt_gbps(b, p)}",
                f"{fmt_ns(j.median)}{j.spread()}, {fmt_gbps(b, j.median)}",
                fmt_ratio(r),
                verdict(r >= PREPARED_BANDWIDTH_GOAL),
            ]
        )
    lines += [
        "- **kvbridge NIXL** — `NixlPreparedReadBenchmark`: the local and the remote list prepared"
        " once (`Transport.prepare`, i.e. `nixl_capi_prep_xfer_dlist`); per request a post by block"
        " indices (`nixl_capi_make_xfer_req`), `status` polled until DONE, `release`.",
        "- **Python binding** — `nixl_read_bench.py --serve`, mode `prepped`: `prep_xfer_dlist` once,"
        " per request `make_prepped_xfer`, `transfer`, `check_xfer_state` until DONE,"
        " `release_xfer_handle`. After every JMH iteration (untimed) it runs one round as long as the"
        " iteration, so the two sides alternate A, B, A, B under the same load; its agents exist only"
        " during its round. Its figure is the median of its measurement rounds"
        " (`python-rounds.jsonl`).",
        "",
        f"Ratio: kvbridge bandwidth ÷ Python binding bandwidth; goal ≥ {fmt_factor(PREPARED_BANDWIDTH_GOAL)}.",
        "",
        table(["block × blocks", "Python binding", "kvbridge NIXL", "ratio", "result"], out),
    ]
    return "\n".join(lines)


def section_content_check(res):
    windows = fmt_setting(res.setting("checksum", "sampledWindows"))
    window = res.setting("checksum", "windowBytes")
    lines = [
        "## Content check beside the READ",
        "",
        "A consumer checks every block it read against the checksum the producer recorded at grant"
        " (`io.kvbridge.integrity.ChecksumScheme`) before it asks the producer to validate the read."
        " Per block size: one block READ through the transport (the READ benchmarks' `ReadPair`,"
        " one block per request, the caller spinning on `status`), and the checksum of that block"
        " in the consumer's memory, read in place (`KvMemory.update`):",
        "",
        "- **CRC-32C** — every byte of the block; what a producer on host memory records.",
        f"- **sampled** — CRC-32C over {windows} windows of"
        f" {fmt_bytes(window) if window else fmt_setting(window)} spread over the block; what a"
        " producer on device memory records.",
        "",
        "Share: checksum time ÷ READ time, both in the same run with the same trial setup.",
        "",
    ]
    rows = []
    for _, bench, transport in CONTENT_CHECKS:
        for block, read, full, sampled in content_check_rows(res, bench):
            b = block_bytes(block)
            applies = block == CONTENT_CHECK_BLOCK and read and full
            rows.append(
                [
                    transport,
                    block_label(block),
                    f"{fmt_ns(read.median)}{read.spread()}, {fmt_gbps(b, read.median)}" if read else "—",
                    f"{fmt_ns(full.median)}{full.spread()}, {fmt_gbps(b, full.median)}" if full else "—",
                    fmt_pct(share_of(full, read)),
                    f"{fmt_ns(sampled.median)}{sampled.spread()}" if sampled else "—",
                    fmt_pct(share_of(sampled, read)),
                    f"≤ {fmt_limit_pct(CONTENT_CHECK_GOAL)}" if applies else "—",
                    verdict(share_of(full, read) <= CONTENT_CHECK_GOAL) if applies else "—",
                ]
            )
    if not rows:
        lines.append(NO_RESULTS)
    else:
        lines.append(
            table(
                [
                    "transport",
                    "block",
                    "READ (time, bandwidth)",
                    "CRC-32C (time, bandwidth)",
                    "CRC-32C ÷ READ",
                    "sampled",
                    "sampled ÷ READ",
                    "goal",
                    "result",
                ],
                rows,
            )
        )
        lines += [
            "",
            "Reproduce: `"
            + jmh_command(res, "ContentCheckBenchmark", {"block": CONTENT_CHECK_BLOCK})
            + "` (the NIXL rows need what the NIXL section's Java side needs).",
        ]
    if not res.has("transfer.NixlContentCheckBenchmark") and res.run.get("nixl_status"):
        lines += ["", "No NIXL rows in this run: " + res.run["nixl_status"]]
    return "\n".join(lines)


def plan_model(res):
    s = res.settings.get("plan")
    if not s:
        return "a model whose shape this run did not record"
    name = f"`{s['model']}`'s shape," if s.get("model") else "a model"
    return (
        f"{name} {s['layers']} layers, K and V, {s['kvHeads']} KV heads of {s['headDim']}"
        f" elements of {s['dtypeBytes']} bytes, {s['producerTokensPerBlock']}-token blocks on the"
        " producer"
    )


def plan_time_table(res, order):
    tokens_list = res.values(PLAN, "tokens")
    rows = []
    for tp in res.values(PLAN, "tp"):
        for block in res.values(PLAN, "consumerBlock"):
            cells = []
            reads = None
            for tokens in tokens_list:
                params = plan_params(tp, block, tokens, order)
                r = res.get(PLAN, **params)
                counts = res.plan_counts.get(tuple(params[k] for k in PLAN_PARAMS))
                if counts:
                    reads = counts["reads"]
                if not r and not counts:
                    cells.append("—")
                    continue
                time = fmt_ns(r.median) + r.spread() if r else "—"
                cells.append(f"{time} · {fmt_size(counts['descriptors'])}" if counts else time)
            if any(c != "—" for c in cells):
                rows.append([f"`{tp}`", f"{block} tokens", "—" if reads is None else reads] + cells)
    if not rows:
        return NO_RESULTS
    return table(
        ["tp", "consumer block", "READs"] + [f"{fmt_size(t)} tokens" for t in tokens_list], rows
    )


def plan_grid_tokens(res, order):
    """The prompt length at which this run counted the most TP pairs of {@code order}."""
    by_tokens = collections.defaultdict(set)
    for tp, _, tokens, o in res.plan_counts:
        if o == order:
            by_tokens[tokens].add(tp)
    if not by_tokens:
        return None
    return max(by_tokens, key=lambda t: (len(by_tokens[t]), param_order(t)))


def plan_grid(res, order):
    tokens = plan_grid_tokens(res, order)
    if tokens is None:
        return None, NO_RESULTS
    tps = sorted({tp for tp, _, t, o in res.plan_counts if o == order and t == tokens}, key=param_order)
    blocks = sorted(
        {b for _, b, t, o in res.plan_counts if o == order and t == tokens}, key=param_order
    )
    rows = []
    for tp in tps:
        row = [f"`{tp}`"]
        for block in blocks:
            c = res.plan_counts.get((tp, block, tokens, order))
            row.append(f"{fmt_size(c['descriptors'])} ({c['reads']})" if c else "—")
        rows.append(row)
    return tokens, table(["tp"] + [f"{b}-token consumer blocks" for b in blocks], rows)


def section_plan(res):
    s = res.settings.get("plan") or {}
    mem = (res.machine_start or {}).get("mem_total_gib", "?")
    lines = [
        "## Read planning",
        "",
        "What planning one read costs the consumer: `io.kvbridge.runtime.consumer.ReadPlan.of`, the consumer's"
        " own planner (`TransferPlanner`) behind the checks of its input, timed by"
        " `io.kvbridge.benchmarks.transfer.PlannerBenchmark` (JMH options"
        f" `{res.run.get('plan_options', '?')}`), for a prompt of {plan_model(res)}. `tp` is"
        " `PxD`: P producer ranks, D consumer ranks; the"
        " consumer's block size varies around the producer's. Each side's pool holds exactly the"
        " prompt's blocks, handed out scattered as a busy engine's pool hands them out, so nothing"
        " merges across blocks. A plan has one READ per (consumer rank, producer rank) pair that"
        " exchanges bytes, each a list of descriptors; a cell below is the median plan time ·"
        " the descriptors of all READs of the request together"
        " (`io.kvbridge.benchmarks.transfer.PlanCounts`).",
        "",
    ]
    for order in ORDERS:
        lines += [f"### Plan time · descriptors per request, {order_label(order)} order", ""]
        if order == "BLOCK_MAJOR" and s.get("blockMajorMaxTokens") is not None:
            lines += [
                "Prompts up to"
                f" {fmt_size(s['blockMajorMaxTokens'])} tokens: past that, a block-major plan with"
                " eight ranks on one side and not the other (one descriptor per token, layer, plane"
                " and rank) no longer fits the benchmark's heap.",
                "",
            ]
        lines += [plan_time_table(res, order), ""]
    for order in ORDERS:
        tokens, grid = plan_grid(res, order)
        title = f"### Descriptors (READs) per request, every TP pair, {order_label(order)} order"
        if tokens is not None:
            title += f", {fmt_size(tokens)} tokens"
        lines += [title, "", grid, ""]
    lines += [
        "### Planning against the fake transport's READ of the same request",
        "",
        "`io.kvbridge.benchmarks.transfer.PlannedReadBenchmark`: one fake agent per rank on each"
        " side, each rank's pool in one registered region, the producer's filled with random bytes;"
        " per request every READ of the plan posted with the plan's descriptors (lists built once,"
        " outside the timing), each polled, spinning, until DONE, then released, as the consumer's"
        " worker side does. Both sides' KV lives in the benchmark's heap, so only prompts up to"
        f" {fmt_setting(s.get('readMaxTokens'))} tokens are read"
        f" ({fmt_bytes(read_bytes(s)) if read_bytes(s) else '?'} a side). The longer prompts"
        f" planned above{longer_prompts(res)} are not: both sides of them do not fit one heap"
        f" beside the other work of this machine's {mem} GiB, and at one rank a side a pool of them"
        " outgrows what one fake region (one Java `ByteBuffer`) holds. Share: plan time ÷ READ"
        " time, both medians of this run.",
        "",
    ]
    rows = []
    for params, plan, read in plan_read_rows(res):
        share = share_of(plan, read)
        counts = res.plan_counts.get(tuple(params[k] for k in PLAN_PARAMS))
        rows.append(
            [
                f"`{params['tp']}`",
                order_label(params["order"]),
                f"{params['consumerBlock']} tokens",
                fmt_size(params["tokens"]),
                fmt_size(counts["descriptors"]) if counts else "—",
                fmt_ns(plan.median) + plan.spread(),
                f"{fmt_ns(read.median)}{read.spread()}, {fmt_gbps(counts['bytes'], read.median)}"
                if counts
                else fmt_ns(read.median) + read.spread(),
                fmt_pct(share),
                f"< {fmt_limit_pct(PLAN_GOAL)}",
                verdict(share < PLAN_GOAL),
            ]
        )
    if rows:
        lines.append(
            table(
                [
                    "tp",
                    "order",
                    "consumer block",
                    "tokens",
                    "descriptors",
                    "plan",
                    "fake READ (time, bandwidth)",
                    "plan ÷ READ",
                    "goal",
                    "result",
                ],
                rows,
            )
        )
        worst = max(plan_read_rows(res), key=lambda r: share_of(r[1], r[2]))[0]
        args = " ".join(f"-p {k}={v}" for k, v in worst.items())
        lines += [
            "",
            "Reproduce the worst row: `java -jar benchmarks/target/benchmarks.jar"
            f" '(PlannerBenchmark|PlannedReadBenchmark)' {res.run.get('plan_options', '')} {args}`",
        ]
    else:
        lines.append(NO_RESULTS)
    return "\n".join(lines)


def longer_prompts(res):
    """The prompts planned but not read, with the bytes each moves, as a parenthesis."""
    read = set(res.values(PLANNED_READ, "tokens"))
    sizes = {tokens: row["bytes"] for (_, _, tokens, _), row in res.plan_counts.items() if tokens not in read}
    if not read or not sizes:
        return ""
    ordered = sorted(sizes, key=param_order)
    return " (" + ", ".join(f"{fmt_size(t)} tokens: {fmt_bytes(sizes[t])} a side" for t in ordered) + ")"


def read_bytes(settings):
    """The KV bytes of the longest prompt read, over all ranks of one side."""
    keys = ("readMaxTokens", "layers", "kvHeads", "headDim", "dtypeBytes")
    if any(settings.get(k) is None for k in keys):
        return None
    return settings["readMaxTokens"] * settings["layers"] * 2 * settings["kvHeads"] * settings["headDim"] * settings["dtypeBytes"]


def e2e_description(res):
    s = res.settings.get("e2e")
    if not s:
        return "The P/D path's settings were not recorded in this run."
    return (
        "In-process, on the sample app's engine API with its default engine settings"
        f" ({fmt_size(s['blocks'])} blocks of {s['tokensPerBlock']} tokens × {s['bytesPerToken']}"
        f" bytes, {fmt_setting(s['stepMillis'], unit=' ms')} step interval), a"
        f" {fmt_size(s['promptTokens'])}-token prompt ({s['promptFullBlocks']} full blocks),"
        f" {s['generatedTokens']} generated tokens: a prefill engine and a decode engine, each with"
        " its own connector (nixl: host memory, same UCX environment as the NIXL section), one request"
        " in flight. P/D: the prefill engine computes the prompt with"
        f" max_tokens={s['prefillMaxTokens']} and a lease (as the router asks), then the decode engine"
        " loads the prompt's full blocks through the connector and generates; colocated: one engine"
        " computes the prompt and generates. Added latency = P/D − colocated at the same percentile"
        " (JMH sample mode); requests/s = the reciprocal of the mean time per request, one request"
        " in flight. Transfer time = what the decode connector measured of each load: the CONFIRM's"
        " round trip plus the READ posted to P's ACK (both on the connectors' progress threads,"
        " every `kvbridge.progress-interval`); decode steps per load = the decode engine's steps from"
        " the request's arrival to the one that reported it received."
    )


def pd_path_goal_text(connector):
    return (
        f"P/D path, {connector}: added latency p50 ≤ {PD_PATH_STEPS_GOAL} × the step interval + the"
        " load's transfer time (CONFIRM"
        " round trip + READ posted to ACK), at the P/D benchmark's step interval"
    )


def pd_path_figures(res, connector):
    """(added p50 ns, step ns, transfer ns, steps per load) of one connector, or None."""
    co = res.get("e2e.PdPathBenchmark.colocated", connector=connector)
    pd = res.get("e2e.PdPathBenchmark.prefillThenDecode", connector=connector)
    fig = res.pd_path.get(connector)
    if not (co and pd and fig):
        return None
    transfer = fig["confirmNanos"] + fig["readToAckNanos"]
    return pd.median - co.median, fig["stepMillis"] * 1e6, transfer, fig["stepsPerLoad"]


def pd_path_goals(res):
    goals = []
    for connector in ["fake", "nixl"]:
        figures = pd_path_figures(res, connector)
        if figures is None:
            continue
        added, step, transfer, steps = figures
        limit = PD_PATH_STEPS_GOAL * step + transfer
        goals.append(
            Goal(
                f"pd-path-{connector}",
                pd_path_goal_text(connector),
                f"{fmt_ns(added)} against {fmt_ns(limit)} ({fmt_ns(step)} step + {fmt_ns(transfer)}"
                f" transfer); {steps:.2f} decode steps per load",
                added <= limit,
                "e2e.PdPathBenchmark.prefillThenDecode",
                {"connector": connector},
                added / limit,
            )
        )
    return goals


def section_e2e(res):
    lines = ["## End to end: the sample app's P/D path", ""]
    results = []
    for connector in ["fake", "nixl"]:
        co = res.get("e2e.PdPathBenchmark.colocated", connector=connector)
        pd = res.get("e2e.PdPathBenchmark.prefillThenDecode", connector=connector)
        if co and pd:
            results.append((connector, co, pd))
    if not results:
        why = res.run.get("e2e_status") or (
            "The P/D benchmark ran but produced no result; see"
            " `benchmarks/target/results/jmh-e2e.log`."
        )
        lines.append("> **Placeholder — not measured in this run.** " + why)
        return "\n".join(lines)
    rows = []
    for connector, co, pd in results:
        figures = pd_path_figures(res, connector)
        rows.append(
            [
                connector,
                f"{1e9 / co.mean:,.0f}",
                f"{1e9 / pd.mean:,.0f}",
                f"{fmt_ns(co.median)} / {fmt_ns(co.p99)}",
                f"{fmt_ns(pd.median)} / {fmt_ns(pd.p99)}",
                f"{fmt_ns(pd.median - co.median)} / {fmt_ns(pd.p99 - co.p99)}",
                fmt_ns(figures[2]) if figures else "—",
                f"{figures[3]:.2f}" if figures else "—",
            ]
        )
    lines += [
        e2e_description(res),
        "",
        table(
            [
                "connector",
                "colocated requests/s",
                "P/D requests/s",
                "colocated p50 / p99",
                "P/D p50 / p99",
                "added latency p50 / p99",
                "transfer time (mean)",
                "decode steps per load",
            ],
            rows,
        ),
    ]
    return "\n".join(lines)


# ---- time to first token -----------------------------------------------------------------------

TTFT_CONNECTORS = ["fake", "nixl"]


def nearest_rank(values, fraction):
    """The nearest-rank percentile of {@code values}: the smallest value with at least {@code
    fraction} of them at or below it."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * fraction // 1))
    return ordered[int(rank) - 1]


def ttft_lengths(res, connector):
    """The prompt lengths measured both ways on {@code connector}, shortest first."""
    found = {t for c, m, t in res.ttft if c == connector and m == "STREAMED"}
    return sorted((t for t in found if (connector, "WHOLE", t) in res.ttft), key=int)


def ttft_figures(res, connector, tokens):
    """The p50s (ns) of one prompt length both ways, or None: TTFT, prefill, exposed transfer, one
    layer's transfer (the whole request's READ ÷ layers), and the exposed time's two parts."""
    whole = res.ttft.get((connector, "WHOLE", tokens))
    streamed = res.ttft.get((connector, "STREAMED", tokens))
    layers = res.setting("ttft", "layers")
    if not (whole and streamed and layers):
        return None

    def parts(row):
        exposed = [t - p for t, p in zip(row["ttftNanos"], row["prefillNanos"])]
        return {
            "ttft": nearest_rank(row["ttftNanos"], 0.5),
            "ttft99": nearest_rank(row["ttftNanos"], 0.99),
            "prefill": nearest_rank(row["prefillNanos"], 0.5),
            "exposed": nearest_rank(exposed, 0.5),
            "toAck": nearest_rank(row["prefillToAckNanos"], 0.5),
            "toStep": nearest_rank(row["ackToStepNanos"], 0.5),
            "requests": row["requests"],
        }

    w, st = parts(whole), parts(streamed)
    return {
        "whole": w,
        "streamed": st,
        "layer": nearest_rank(whole["transferNanos"], 0.5) / layers,
        "bytes": whole["bytes"],
    }


def ttft_exposed_goal_text(connector):
    return (
        f"time to first token, {connector}: streamed, exposed transfer p50 (TTFT − prefill) ≤"
        f" {fmt_factor(TTFT_EXPOSED_GOAL)} one layer's transfer (the whole-request READ p50 ÷ layers),"
        f" prompts ≥ {fmt_size(TTFT_EXPOSED_MIN_TOKENS)} tokens"
    )


def ttft_short_goal_text(connector):
    return (
        f"time to first token, {connector}: p50 at {fmt_size(TTFT_SHORT_TOKENS)} prompt tokens with"
        " the default `kvbridge.streaming.min-tokens` ≤"
        f" {fmt_factor(TTFT_SHORT_GOAL)} the whole-request path's"
    )


def ttft_default_goal_text(connector):
    return (
        f"time to first token, {connector}: streamed p50 ≤ the whole-request path's at every"
        " measured prompt length from the default `kvbridge.streaming.min-tokens` on"
    )


TTFT_GOAL_TEXTS = [
    ("exposed", ttft_exposed_goal_text),
    ("short", ttft_short_goal_text),
    ("default", ttft_default_goal_text),
]


def ttft_goals(res):
    goals = []
    threshold = res.setting("ttft", "streamingMinTokens")
    for connector in TTFT_CONNECTORS:
        lengths = ttft_lengths(res, connector)
        long_ones = [
            (t, f) for t in lengths if int(t) >= int(TTFT_EXPOSED_MIN_TOKENS)
            for f in [ttft_figures(res, connector, t)] if f
        ]
        if long_ones:
            worst_t, worst = max(long_ones, key=lambda tf: tf[1]["streamed"]["exposed"] / tf[1]["layer"])
            r = worst["streamed"]["exposed"] / worst["layer"]
            st = worst["streamed"]
            goals.append(
                Goal(
                    f"ttft-exposed-{connector}",
                    ttft_exposed_goal_text(connector),
                    f"worst {fmt_ratio(r)} ({fmt_size(worst_t)} tokens: {fmt_ns(st['exposed'])} exposed"
                    f" against {fmt_ns(worst['layer'])} for one layer)",
                    r <= TTFT_EXPOSED_GOAL,
                    badness=r,
                    profile=[
                        f"The exposed time of {fmt_size(worst_t)}-token streamed requests, in its two"
                        " measured parts (p50 of each; `TtftRun` times them on the engines' threads):"
                        f" from the prefill's end to D learning of P's ACK {fmt_ns(st['toAck'])} (the"
                        " last layer's announcement, its READ and check, the COMPLETION and the ACK,"
                        " each picked up on a progress round); from the ACK to D's step that reported"
                        f" the load received {fmt_ns(st['toStep'])}. One layer's READ, from the"
                        f" whole-request path: {fmt_ns(worst['layer'])}.",
                    ],
                )
            )
        short = ttft_figures(res, connector, TTFT_SHORT_TOKENS)
        default = res.ttft.get((connector, "DEFAULT", TTFT_SHORT_TOKENS))
        if short and default:
            d = nearest_rank(default["ttftNanos"], 0.5)
            r = d / short["whole"]["ttft"]
            path = "streamed" if default["streamed"] else "whole-request"
            goals.append(
                Goal(
                    f"ttft-short-{connector}",
                    ttft_short_goal_text(connector),
                    f"{fmt_ratio(r)} ({fmt_ns(d)} by the default path, {path}, against"
                    f" {fmt_ns(short['whole']['ttft'])})",
                    r <= TTFT_SHORT_GOAL,
                    badness=r,
                )
            )
        covered = [
            (t, f) for t in lengths if threshold is not None and int(t) >= threshold
            for f in [ttft_figures(res, connector, t)] if f
        ]
        if covered:
            worst_t, worst = max(covered, key=lambda tf: tf[1]["streamed"]["ttft"] / tf[1]["whole"]["ttft"])
            r = worst["streamed"]["ttft"] / worst["whole"]["ttft"]
            goals.append(
                Goal(
                    f"ttft-default-{connector}",
                    ttft_default_goal_text(connector),
                    f"worst streamed ÷ whole {fmt_ratio(r)} ({fmt_size(worst_t)} tokens; default"
                    f" {fmt_size(threshold)})",
                    r <= 1,
                    badness=r,
                )
            )
    return goals


def ttft_description(res):
    s = res.settings.get("ttft")
    if not s:
        return "The time-to-first-token benchmark's settings were not recorded in this run."
    return (
        f"`io.kvbridge.benchmarks.ttft.TtftRun`: {s['model']}'s KV ({fmt_size(s['layers'])} layers,"
        f" {fmt_bytes(s['bytesPerToken'])} per token, a tensor per layer: `{s['placement']}`) in blocks of"
        f" {s['tokensPerBlock']} tokens, one rank each side, one request in flight, two engines in one"
        " process, each a connector driven as an engine drives it. P computes each layer for"
        f" {fmt_setting(s['prefillCostNanos'], 1e3, ' µs')} per token (a wait, as a GPU computing would"
        " leave the CPU free), writes it into its tensor for that layer, and reports it saved when the"
        " request is streamed; both engines step every"
        f" {fmt_setting(s['stepMicros'], 1e3, ' ms')}. Whole: the engine does not stream; P leases"
        " the request when its prefill ends (`requestFinished`) and D reads it all after that."
        " Streamed: the engine asks for the lease as the prefill starts (`requestStarted`, P"
        " streaming every prompt), D gets the parameters at once and reads each layer as P announces"
        " it."
        " Default: the same engine with P's default threshold"
        f" (`kvbridge.streaming.min-tokens` = {fmt_size(s['streamingMinTokens'])}). The modes'"
        " requests alternate, warm-up requests first. TTFT = the request's arrival at P to D's step"
        " that reported its load received (decoding costs nothing here); prefill = arrival to the"
        " last layer written and saved; exposed transfer = TTFT − prefill; one layer's transfer ="
        " the whole-request READ (D's first post to P's ACK) ÷ layers. p50 and p99 are nearest-rank"
        " over the measured requests (their count is in the table: p99 of few requests is their"
        " maximum). D's copy of one request per mode and length is compared with P's byte for byte."
    )


def section_ttft(res):
    lines = ["## Time to first token: streaming layer by layer", ""]
    connectors = [c for c in TTFT_CONNECTORS if ttft_lengths(res, c)]
    if not connectors:
        lines.append(
            "> **Placeholder — not measured in this run.** The time-to-first-token run left no"
            " `ttft.jsonl`; see `benchmarks/target/results/ttft.log`."
        )
        return "\n".join(lines)
    lines += [ttft_description(res), ""]
    for connector in connectors:
        rows = []
        for t in ttft_lengths(res, connector):
            f = ttft_figures(res, connector, t)
            if not f:
                continue
            w, st = f["whole"], f["streamed"]
            default = res.ttft.get((connector, "DEFAULT", t))
            rows.append(
                [
                    fmt_size(t),
                    fmt_bytes(f["bytes"]),
                    fmt_size(w["requests"]),
                    f"{fmt_ns(w['ttft'])} / {fmt_ns(w['ttft99'])}",
                    f"{fmt_ns(st['ttft'])} / {fmt_ns(st['ttft99'])}",
                    fmt_ratio(st["ttft"] / w["ttft"]),
                    f"{fmt_ns(w['prefill'])} / {fmt_ns(st['prefill'])}",
                    f"{fmt_ns(w['exposed'])} / {fmt_ns(st['exposed'])}",
                    fmt_ns(f["layer"]),
                    fmt_ratio(st["exposed"] / f["layer"]),
                    f"{fmt_ns(st['toAck'])} + {fmt_ns(st['toStep'])}",
                    (
                        f"{fmt_ns(nearest_rank(default['ttftNanos'], 0.5))}"
                        f" ({'streamed' if default['streamed'] else 'whole'})"
                    )
                    if default
                    else "—",
                ]
            )
        lines += [
            f"**{connector}**" + (" (host memory, same UCX environment as the NIXL section)" if connector == "nixl" else "") + ":",
            "",
            table(
                [
                    "prompt tokens",
                    "KV",
                    "requests per mode",
                    "whole TTFT p50 / p99",
                    "streamed TTFT p50 / p99",
                    "streamed ÷ whole (p50)",
                    "prefill p50 whole / streamed",
                    "exposed transfer p50 whole / streamed",
                    "one layer's transfer",
                    "streamed exposed ÷ one layer",
                    "streamed exposed: prefill end → ACK + ACK → step",
                    "default threshold TTFT p50 (its path)",
                ],
                rows,
            ),
            "",
        ]
    return "\n".join(lines).rstrip()


# ---- cache-aware routing -----------------------------------------------------------------------

ROUTING_POLICIES = [("load", "load only (today's policy)"), ("cache", "cache-aware")]
ROUTING_RESTARTS = [
    ("decode_restart_ms", "a decode node killed and restarted (empty cache, new incarnation)"),
    ("router_restart_ms", "the router killed and restarted"),
    ("broker_restart_ms", "the NATS server killed and restarted, with requests while it was down"),
]


def routing_share_goal_text():
    return (
        "cache-aware routing, multi-turn conversations on separate processes: prompt tokens served"
        f" from the decode node's cache ≥ {fmt_limit_pct(ROUTING_SHARE_GOAL)} of what an oracle that"
        " knows every decode node's cache could have served"
    )


def routing_decision_goal_text():
    return (
        f"the router's decision (prompt hashes, prefix index, load) p99 ≤"
        f" {fmt_limit_ns(ROUTING_DECISION_GOAL_NS)} with at least {fmt_size(ROUTING_DECISION_BLOCKS)}"
        " blocks indexed"
    )


def micros_bound_ns(micros):
    """A bucket's upper bound in µs as ns; none (beyond the last bound) as infinity."""
    return math.inf if micros is None else micros * 1e3


def fmt_bound_ns(ns):
    """An upper bound of a histogram bucket; the last bucket has none."""
    return fmt_ns(ns) if math.isfinite(ns) else "(beyond the histogram's last bound)"


def routing_recovery_goal_text():
    return (
        "after a decode node, the router or the NATS server is killed and restarted, the router's"
        f" index agrees with the engines' caches again within {fmt_limit_ns(ROUTING_RECOVERY_GOAL_NS)},"
        " and no call goes to the killed decode node once the router marked it down"
    )


def routing_policy(res, name):
    doc = res.multi_turn
    return doc.get("policies", {}).get(name) if doc else None


def routing_share(p):
    return p["cached_tokens"] / p["oracle_tokens"] if p and p.get("oracle_tokens") else None


def routing_goals(res):
    cache, load = routing_policy(res, "cache"), routing_policy(res, "load")
    if not cache:
        return []
    goals = []
    share = routing_share(cache)
    if share is not None:
        load_share = routing_share(load)
        goals.append(
            Goal(
                "routing-share",
                routing_share_goal_text(),
                f"{fmt_pct(share)} ({fmt_size(cache['cached_tokens'])} of"
                f" {fmt_size(cache['oracle_tokens'])} tokens); load only: "
                + (fmt_pct(load_share) if load_share is not None else "—"),
                share >= ROUTING_SHARE_GOAL,
                badness=ROUTING_SHARE_GOAL / max(share, 1e-9),
                profile=[
                    f"Requests by where D's KV came from: {routing_sources(cache)}.",
                ],
            )
        )
    decisions = cache.get("decisions") or {}
    workload = cache.get("workload_decisions") or {}
    blocks = cache.get("index_blocks")
    if workload.get("count") and blocks is not None:
        p99 = micros_bound_ns(workload.get("p99AtMostMicros"))
        enough = blocks >= ROUTING_DECISION_BLOCKS
        since_start = (
            f"; every decision since the router started, the fill's included: p99"
            f" {fmt_ns(decisions['p99Micros'] * 1e3)}, max {fmt_ns(decisions['maxMicros'] * 1e3)}"
            if decisions.get("count")
            else ""
        )
        goals.append(
            Goal(
                "routing-decision",
                routing_decision_goal_text(),
                f"p99 ≤ {fmt_bound_ns(p99)}"
                f" (p50 ≤ {fmt_bound_ns(micros_bound_ns(workload.get('p50AtMostMicros')))})"
                f" over the workload's {fmt_size(workload['count'])} decisions,"
                f" {fmt_size(blocks)} blocks indexed" + since_start,
                p99 <= ROUTING_DECISION_GOAL_NS and enough,
                badness=p99 / ROUTING_DECISION_GOAL_NS,
                profile=[
                    f"The index held {fmt_size(blocks)} blocks"
                    + ("" if enough else f", fewer than the goal's {fmt_size(ROUTING_DECISION_BLOCKS)}")
                    + ".",
                    "The workload's quantiles are read from the router's decision histogram"
                    " (`kvbridge.router.decision`) before and after the workload: each is at most"
                    " the upper bound of the bucket it falls in, and a bucket ends at exactly 1 ms.",
                ],
            )
        )
    elif decisions.get("count") and blocks is not None:
        p99 = decisions["p99Micros"] * 1e3
        enough = blocks >= ROUTING_DECISION_BLOCKS
        goals.append(
            Goal(
                "routing-decision",
                routing_decision_goal_text(),
                f"p99 {fmt_ns(p99)} (p50 {fmt_ns(decisions['p50Micros'] * 1e3)}, max"
                f" {fmt_ns(decisions['maxMicros'] * 1e3)}) over the last"
                f" {fmt_size(min(decisions['count'], 8192))} decisions, {fmt_size(blocks)} blocks"
                " indexed",
                p99 <= ROUTING_DECISION_GOAL_NS and enough,
                badness=p99 / ROUTING_DECISION_GOAL_NS,
                profile=[
                    f"The index held {fmt_size(blocks)} blocks"
                    + ("" if enough else f", fewer than the goal's {fmt_size(ROUTING_DECISION_BLOCKS)}")
                    + "."
                ],
            )
        )
    recovery = res.multi_turn.get("recovery") or {}
    times = [recovery[k] for k, _ in ROUTING_RESTARTS if recovery.get(k) is not None]
    if len(times) == len(ROUTING_RESTARTS):
        worst = max(times) * 1e6
        calls = recovery.get("calls_to_killed_decode_after_marked_down")
        goals.append(
            Goal(
                "routing-recovery",
                routing_recovery_goal_text(),
                ", ".join(
                    f"{label.split(' killed')[0]} {fmt_ns(recovery[k] * 1e6)}"
                    for k, label in ROUTING_RESTARTS
                )
                + f"; calls to the killed decode node after it was marked down: {calls}",
                worst <= ROUTING_RECOVERY_GOAL_NS and calls == 0,
                badness=worst / ROUTING_RECOVERY_GOAL_NS,
                profile=[
                    "Each time runs from the restarted process answering (the NATS server"
                    " listening) to the router's index holding as many blocks of as many engines"
                    " as the engines' own snapshots."
                ],
            )
        )
    return goals


def routing_ratio(cache, load, key):
    """Cache-aware ÷ load only, for {@code key}."""
    return cache[key] / load[key] if load.get(key) else None


def routing_sources(p):
    sources = p.get("kv_sources") or {}
    ttft = p.get("ttft_p50_ms_by_source") or {}
    return (
        ", ".join(
            f"{k} {fmt_size(v)}" + (f" (TTFT p50 {fmt_ns(ttft[k] * 1e6)})" if k in ttft else "")
            for k, v in sorted(sources.items())
        )
        or "—"
    )


def section_routing(res):
    lines = ["## Cache-aware routing: multi-turn conversations", ""]
    doc = res.multi_turn
    cache, load = routing_policy(res, "cache"), routing_policy(res, "load")
    if not cache or not load:
        lines.append(
            "> **Placeholder — not measured in this run.** `benchmarks/multi-turn.sh` left no"
            " `multi-turn.json`."
        )
        return "\n".join(lines)
    st = doc["settings"]
    lines += [
        f"`benchmarks/multi-turn.sh` (`io.kvbridge.benchmarks.routing.MultiTurnRun`) starts the sample"
        f" app as {fmt_size(st['prefillNodes'])} prefill and {fmt_size(st['decodeNodes'])} decode"
        " nodes and a router, each a JVM of its own (fake connector over a shared directory), and"
        f" sends {fmt_size(st['conversations'])} conversations of {fmt_size(st['turns'])} turns,"
        f" {fmt_size(st['concurrency'])} at a time. They share {fmt_size(st['systemPrompts'])} system"
        f" prompts of {fmt_size(st['systemBytes'])} tokens; each turn adds"
        f" {fmt_size(st['userBytes'])} tokens of user text to the previous turn's prompt and answer."
        " Each request asks for one token: its latency is its time to first token. Each policy runs"
        f" on a fresh fleet whose engines keep up to {fmt_size(st['cacheBlocks'])} blocks of"
        f" {fmt_size(st['tokensPerBlock'])} tokens in their prefix caches, filled first with"
        f" {fmt_size(st['fillers'])} other prompts of {fmt_size(st['fillerBytes'])} tokens. The"
        " oracle follows every decode node's own KV events and, as each request is sent, counts the"
        " most of its leading full blocks any decode node holds; D's cache hits count in full blocks"
        " too. Moved and computed tokens are the engines' own counters over the workload.",
        "",
    ]
    rows = []
    for name, label in ROUTING_POLICIES:
        p = routing_policy(res, name)
        d = p.get("decisions") or {}
        w = p.get("workload_decisions") or {}
        decided = (
            f"≤ {fmt_bound_ns(micros_bound_ns(w.get('p50AtMostMicros')))}"
            f" / ≤ {fmt_bound_ns(micros_bound_ns(w.get('p99AtMostMicros')))}"
            if w.get("count")
            else f"{fmt_ns(d.get('p50Micros', 0) * 1e3)} / {fmt_ns(d.get('p99Micros', 0) * 1e3)}"
        )
        rows.append(
            [
                label,
                fmt_size(p["requests"]),
                f"{fmt_ns(p['ttft_p50_ms'] * 1e6)} / {fmt_ns(p['ttft_p90_ms'] * 1e6)}",
                fmt_size(p["cached_tokens"]),
                fmt_size(p["oracle_tokens"]),
                fmt_pct(routing_share(p)),
                fmt_size(p["moved_tokens"]),
                f"{fmt_size(p['computed_tokens_prefill'])} / {fmt_size(p['computed_tokens_decode'])}",
                fmt_size(p.get("decoded_alone") or 0),
                decided,
                fmt_size(p["index_blocks"]) if p.get("index_blocks") is not None else "—",
            ]
        )
    lines += [
        table(
            [
                "policy",
                "requests",
                "TTFT p50 / p90",
                "prompt tokens from D's cache",
                "oracle's",
                "share of the oracle's",
                "tokens moved P → D",
                "tokens computed on P / D",
                "served by D alone",
                "decision p50 / p99 (the workload's)",
                "blocks indexed",
            ],
            rows,
        ),
        "",
        "Requests by where the decode node's KV came from (`COMPUTED`: served by the decode node"
        " alone; `LOADED`: loaded from a prefill node; `CACHED`: all in its cache, the lease"
        " released): load only "
        + routing_sources(load)
        + "; cache-aware "
        + routing_sources(cache)
        + ".",
        "",
        "Cache-aware ÷ load only: tokens moved "
        + fmt_ratio(routing_ratio(cache, load, "moved_tokens"))
        + ", tokens computed "
        + fmt_ratio(routing_ratio(cache, load, "computed_tokens"))
        + ", TTFT p50 "
        + fmt_ratio(routing_ratio(cache, load, "ttft_p50_ms"))
        + ", TTFT p90 "
        + fmt_ratio(routing_ratio(cache, load, "ttft_p90_ms"))
        + ".",
    ]
    recovery = doc.get("recovery") or {}
    if recovery:
        rows = [
            [label, fmt_ns(recovery[k] * 1e6) if recovery.get(k) is not None else "—"]
            for k, label in ROUTING_RESTARTS
        ]
        lines += [
            "",
            "Recovery, on the cache-aware fleet after its workload (events through NATS JetStream):"
            " the time from the restarted process answering to the router's index agreeing with"
            " every engine's own snapshot (as many blocks, as many engines).",
            "",
            table(["restart", "index agrees after"], rows),
            "",
            "Calls the router made to the killed decode node after it marked it down (requests sent"
            " while it was gone): "
            + str(recovery.get("calls_to_killed_decode_after_marked_down", "—"))
            + ".",
        ]
    return "\n".join(lines)


# ---- findings ----------------------------------------------------------------------------------

# A figure: a number standing on its own, not a digit inside a name such as CRC32C, CRC-32C or e2e.
FIGURE = re.compile(r"(?<![A-Za-z0-9_.,$])(?<![A-Za-z]-)\d+(?:[.,]\d+)*")
PLACEHOLDER = re.compile(r"\{(self|inclusive):([^{}\s]+)\}")


def figures(text):
    """The figures in {@code text}, in order."""
    return FIGURE.findall(text)


def read_findings(path):
    """Sections '## <family>' of the findings file, keyed by family. A findings file holds no
    figures: every figure in the report comes from the run."""
    if not path or not os.path.exists(path):
        return {}
    found, current = {}, None
    with open(path) as f:
        for number, line in enumerate(f, 1):
            stated = figures(PLACEHOLDER.sub("", line))
            if stated:
                raise SystemExit(
                    f"{path}:{number} states the figure {stated[0]}: findings hold no figures, every"
                    " figure in the report comes from the run (name a profile frame with"
                    " {self:FRAME} or {inclusive:FRAME} to quote its share of this run's samples)"
                )
            m = re.match(r"^## (\S+)\s*$", line)
            if m:
                current = m.group(1)
                found[current] = []
            elif current:
                found[current].append(line.rstrip("\n"))
    return {k: "\n".join(v).strip() for k, v in found.items()}


def fill_placeholders(note, prof):
    """Replaces {self:FRAME} and {inclusive:FRAME} with the frame's share of this run's profile."""

    def share(m):
        if not prof:
            return "(no profile in this run)"
        share = dict(prof[m.group(1)]).get(m.group(2))
        return f"{share:.1f}%" if share else "none"

    return PLACEHOLDER.sub(share, note)


def section_missed(res, goals, findings):
    missed = [g for g in goals if g.ok is False]
    lines = ["## Missed goals: profiles and fixes", ""]
    if not missed:
        return "\n".join(lines + ["Every goal measured in this run was met."])
    seen = set()
    for g in missed:
        if g.family in seen:
            continue
        seen.add(g.family)
        lines += [f"### {g.text}", "", f"Measured: {g.measured}.", ""]
        prof = res.profile(g.family)
        if prof:
            lines += [
                f"JFR samples of `{prof['benchmark']}` ({prof['params']}): {prof['samples']} in all,"
                f" {prof.get('native_samples', 0)} of them of the benchmark thread in"
                " native code (`jdk.NativeMethodSample`), the rest `jdk.ExecutionSample`;"
                f" measurement iterations only (`{prof['command']}`, then"
                " `jfr print --events jdk.ExecutionSample,jdk.NativeMethodSample`).",
                "",
            ]
            if prof["self"]:
                lines += [
                    "Top frames (self):",
                    "",
                    table(["share", "frame"], [[f"{s:.1f}%", f"`{fr}`"] for fr, s in prof["self"][:TOP_FRAMES]]),
                    "",
                    "On the stack (inclusive, benchmark harness frames left out):",
                    "",
                    table(
                        ["share", "frame"],
                        [[f"{s:.1f}%", f"`{fr}`"] for fr, s in prof["inclusive"][:TOP_FRAMES]],
                    ),
                    "",
                ]
            if prof.get("stacks"):
                lines += [
                    f"Most frequent stacks (innermost first, {prof['stack_depth']} frames):",
                    "",
                    table(["share", "stack"], [[f"{s:.1f}%", f"`{st}`"] for st, s in prof["stacks"]]),
                    "",
                ]
            if prof.get("threads"):
                lines += [
                    "Samples per thread: "
                    + ", ".join(f"{t} {s:.0f}%" for t, s in prof["threads"])
                    + ".",
                    "",
                ]
        elif g.profile:
            lines += g.profile + [""]
        else:
            lines += ["_No profile recorded for this goal in this run._", ""]
        note = findings.get(g.family)
        if note:
            lines += ["**Why, and what would fix it.** " + fill_placeholders(note, prof), ""]
    return "\n".join(lines).rstrip()


def render(results, findings_path):
    """BENCHMARKS.md for the results in directory {@code results}."""
    res = Results(results)
    goals = all_goals(res)
    findings = read_findings(findings_path)
    parts = [
        "# kvbridge benchmarks",
        "",
        "_Generated by `benchmarks/report.py` from the results of `benchmarks/run.sh`; do not edit by"
        " hand — rerun instead. Every figure comes from the run that wrote this file, except the"
        " goals, which `report.py` states._",
        "",
        "Reproduce everything (build, all benchmarks, profiles of missed goals, this file):",
        "",
        "```",
        res.run.get("command", "benchmarks/run.sh"),
        "```",
        "",
        "Raw results: `benchmarks/target/results/` (`jmh.json`, `jmh-nixl.json`, `jmh-e2e.json` from"
        " JMH `-rf json`; `nixl-python.json` from the Python binding; `settings.json`, the benchmarks'"
        " fixed settings; `jfr/` profile summaries; the JMH logs).",
        "",
        section_summary(goals),
        "",
        section_machine(res),
        "",
        section_lease(res),
        "",
        section_fake(res, goals),
        "",
        section_nixl(res, goals),
        "",
        section_nixl_prepared(res),
        "",
        section_many_peers(res),
        "",
        section_content_check(res),
        "",
        section_plan(res),
        "",
        section_real_size(res),
        "",
        section_e2e(res),
        "",
        section_ttft(res),
        "",
        section_request_path(res),
        "",
        section_routing(res),
        "",
        section_missed(res, goals, findings),
        "",
    ]
    if findings.get("notes"):
        parts += ["## Notes", "", findings["notes"], ""]
    return "\n".join(parts)


def write(args):
    text = render(args.results, args.findings)
    with open(args.out, "w") as f:
        f.write(text)


# ---- profiles ----------------------------------------------------------------------------------


def plan_profiles(args):
    """One line per missed family: the worst case of the family."""
    res = Results(args.results)
    worst = {}
    for g in all_goals(res):
        if g.ok is False and g.jmh:
            if g.family not in worst or g.badness > worst[g.family].badness:
                worst[g.family] = g
    for family, g in worst.items():
        regex = "^" + re.escape(PKG + g.jmh).replace("\\.", ".") + "$"
        params = " ".join(f"-p {k}={v}" for k, v in g.params.items())
        print(f"{family}\t{regex}\t{params}")


HARNESS = re.compile(
    r"^(org\.openjdk\.jmh\.|java\.lang\.Thread\.run|java\.util\.concurrent\.ThreadPoolExecutor|"
    r"java\.util\.concurrent\.FutureTask|jdk\.internal\.reflect\.|java\.lang\.reflect\.Method\.invoke|"
    r"io\.kvbridge\.benchmarks\..*jmh_generated)"
)


# Frames of a stack the profile summary keeps, innermost first.
STACK_DEPTH = 5


def frame_name(frame):
    method = frame["method"]
    return f"{method['type']['name'].replace('/', '.')}.{method['name']}"


def summarize_jfr(args):
    proc = subprocess.run(
        # jfr print keeps 5 frames of each stack unless told otherwise: inclusive shares need them all.
        ["jfr", "print", "--json", "--stack-depth", "64", "--events",
         "jdk.ExecutionSample,jdk.NativeMethodSample", args.jfr],
        check=True,
        capture_output=True,
        text=True,
    )
    events = json.loads(proc.stdout)["recording"]["events"]
    self_counts, incl_counts = collections.Counter(), collections.Counter()
    threads, stacks, kinds = collections.Counter(), collections.Counter(), collections.Counter()
    for e in events:
        values = e["values"]
        frames = (values.get("stackTrace") or {}).get("frames") or []
        if not frames:
            continue
        thread = (values.get("sampledThread") or {}).get("javaName") or "?"
        if e["type"] == "jdk.NativeMethodSample" and "jmh-worker" not in thread:
            continue  # threads parked in native code (JMH, JFR, GC helpers): not the work
        kinds[e["type"]] += 1
        threads[re.sub(r"[-#]?\d+$", "", thread)] += 1
        names = [frame_name(f) for f in frames]
        self_counts[names[0]] += 1
        for name in set(names):
            if not HARNESS.match(name):
                incl_counts[name] += 1
        useful = [n for n in names if not HARNESS.match(n) and not n.startswith("java.lang.invoke.")]
        useful = useful[:STACK_DEPTH]
        stacks[" ← ".join(useful)] += 1
    samples = sum(self_counts.values())
    total = max(samples, 1)
    summary = {
        "benchmark": args.benchmark,
        "params": args.params,
        "command": args.command,
        "samples": samples,
        "native_samples": kinds["jdk.NativeMethodSample"],
        # Every frame sampled, so that a finding can quote any frame's share.
        "self": [(n, 100.0 * c / total) for n, c in self_counts.most_common()],
        "inclusive": [(n, 100.0 * c / total) for n, c in incl_counts.most_common()],
        "stack_depth": STACK_DEPTH,
        "stacks": [(n, 100.0 * c / total) for n, c in stacks.most_common(5)],
        "threads": [(n, 100.0 * c / total) for n, c in threads.most_common(5)],
    }
    with open(args.out, "w") as f:
        json.dump(summary, f, indent=2)


# ---- machine -----------------------------------------------------------------------------------


def machine(args):
    info = {"cpus": os.cpu_count(), "os": f"{platform.system()} {platform.release()}"}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu_model"] = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    info["mem_total_gib"] = round(int(line.split()[1]) / (1 << 20), 1)
                    break
    except OSError:
        pass
    info["load_1min"] = round(os.getloadavg()[0], 2)
    with open(args.out, "w") as f:
        json.dump(info, f, indent=2)


def main():
    parser = argparse.ArgumentParser(description="kvbridge benchmark report")
    sub = parser.add_subparsers(dest="action", required=True)
    p = sub.add_parser("machine")
    p.add_argument("--out", required=True)
    p = sub.add_parser("plan-profiles")
    p.add_argument("--results", required=True)
    p = sub.add_parser("summarize-jfr")
    p.add_argument("--jfr", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--benchmark", default="")
    p.add_argument("--params", default="")
    p.add_argument("--command", default="")
    p = sub.add_parser("write")
    p.add_argument("--results", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--findings", default=os.path.join(os.path.dirname(__file__), "findings.md"))
    args = parser.parse_args()
    actions = {
        "machine": machine,
        "plan-profiles": plan_profiles,
        "summarize-jfr": summarize_jfr,
        "write": write,
    }
    actions[args.action](args)


if __name__ == "__main__":
    sys.exit(main())

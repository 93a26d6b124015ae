#!/usr/bin/env python3
"""Turns the results of benchmarks/run.sh into BENCHMARKS.md (python3 standard library only).

Sub-commands:
  machine        --out FILE           record the machine (cores, memory, CPU, load) as JSON
  plan-profiles  --results DIR        print one line per missed goal family to profile with JFR:
                                      family <TAB> JMH regex <TAB> JMH parameter arguments
  summarize-jfr  --jfr FILE --out F   top frames of the execution samples of a JFR recording
  write          --results DIR --out BENCHMARKS.md [--findings FILE]

The results directory holds jmh.json, jmh-nixl.json and jmh-e2e.json (JMH -rf json), machine-start.json, machine-end.json,
run.json (the command and settings), optionally nixl-python.json (python/nixl_read_bench.py)
and jfr/<family>.json (summarize-jfr).

Every time is the median of a benchmark's measurement iterations; a ratio is a ratio of medians,
both sides measured in the same run.
"""

import argparse
import collections
import json
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
SIZES = ["1000", "10000", "100000", "1000000"]
SHAPES = [
    "16KiBx1", "16KiBx16", "16KiBx256",
    "256KiBx1", "256KiBx16", "256KiBx256",
    "1MiBx1", "1MiBx16", "1MiBx256",
    "16MiBx1", "16MiBx16",
]
UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20}
TO_NS = {"ns/op": 1.0, "us/op": 1e3, "ms/op": 1e6, "s/op": 1e9}

NO_RESULTS = "_No results in this run; see `benchmarks/target/results/jmh.log`._"
IDLE_SWEEP_SIZE = "100000"
IDLE_SWEEP_GOAL = 1000.0
PER_OP_GOAL_NS = 1000.0
FAKE_GOAL = 0.8
NIXL_BANDWIDTH_GOAL = 0.95


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
        for file in ("jmh.json", "jmh-nixl.json", "jmh-e2e.json"):
            path = os.path.join(directory, file)
            if not os.path.exists(path):
                continue
            with open(path) as f:
                for entry in json.load(f):
                    self.entries.append(entry)
                    name = entry["benchmark"].removeprefix(PKG)
                    key = (name, tuple(sorted(entry["params"].items())) if entry.get("params") else ())
                    self.by_key[key] = Result(entry)
        self.machine_start = read_json(os.path.join(directory, "machine-start.json"))
        self.machine_end = read_json(os.path.join(directory, "machine-end.json"))
        self.run = read_json(os.path.join(directory, "run.json")) or {}
        self.nixl_python = read_json(os.path.join(directory, "nixl-python.json"))

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

    def profile(self, family):
        return read_json(os.path.join(self.dir, "jfr", family + ".json"))


def read_json(path):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def shape_bytes(shape):
    m = re.fullmatch(r"(\d+)(B|KiB|MiB)x(\d+)", shape)
    return int(m.group(1)) * UNITS[m.group(2)] * int(m.group(3))


def shape_block(shape):
    m = re.fullmatch(r"(\d+)(B|KiB|MiB)x(\d+)", shape)
    return int(m.group(1)) * UNITS[m.group(2)]


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


def fmt_ratio(r):
    if r is None:
        return "—"
    if r >= 100:
        return f"{r:,.0f}×"
    if r >= 10:
        return f"{r:.1f}×"
    return f"{r:.2f}×"


def fmt_gbps(bytes_, ns):
    return f"{bytes_ / ns:.2f} GB/s"


def fmt_size(n):
    return f"{int(n):,}"


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


# ---- goals -------------------------------------------------------------------------------------


class Goal:
    """One checked goal: a family (what a profile and a finding are keyed by) and a verdict."""

    def __init__(self, family, text, measured, ok, jmh=None, params=None, badness=0.0):
        self.family, self.text, self.measured, self.ok = family, text, measured, ok
        self.jmh, self.params, self.badness = jmh, params or {}, badness


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
                "idle sweep at 100k live leases ≥ 1,000× cheaper than a full scan",
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
        measured = {n: res.get(name, liveLeases=n, **params) for n in SIZES}
        measured = {n: m for n, m in measured.items() if m is not None}
        if not measured:
            continue
        missed = [n for n, m in measured.items() if m.median >= PER_OP_GOAL_NS]
        worst = max(measured, key=lambda n: measured[n].median)
        goals.append(
            Goal(
                family,
                f"LeaseTable {what} < 1 µs",
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
    for shape in SHAPES:
        if shape_block(shape) < (1 << 20):
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
            "fake transport READ ≥ 0.8× raw copy bandwidth, blocks ≥ 1 MiB",
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
    for shape in SHAPES:
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
            "kvbridge NIXL READ ≥ 0.95× the bandwidth of NIXL's Python binding",
            ", ".join(f"{s}: {fmt_ratio(r)}" for s, r in ratios),
            all(r >= NIXL_BANDWIDTH_GOAL for _, r in ratios),
            "transfer.NixlReadBenchmark.transportRead",
            {"shape": worst[0]},
            NIXL_BANDWIDTH_GOAL / worst[1],
        )
    ]
    small = [(s, p, j) for s, p, j in rows if s == "16KiBx1"]
    if small:
        s, p, j = small[0]
        overhead_ok = j.median <= p["us_per_request"] * 1e3
        goals.append(
            Goal(
                "nixl-overhead",
                "per-request time of the smallest READ (16 KiB × 1) no worse than the Python binding",
                f"{fmt_ns(j.median)} vs {fmt_ns(p['us_per_request'] * 1e3)}",
                overhead_ok,
                "transfer.NixlReadBenchmark.transportRead",
                {"shape": s},
                j.median / (p["us_per_request"] * 1e3),
            )
        )
    return goals


def all_goals(res):
    goals = lease_goals(res) + fake_goals(res) + nixl_goals(res)
    families = {g.family for g in goals}
    for family, text in [
        ("lease-sweep", "idle sweep at 100k live leases ≥ 1,000× cheaper than a full scan"),
        ("fake-read", "fake transport READ ≥ 0.8× raw copy bandwidth, blocks ≥ 1 MiB"),
        ("nixl-read", "kvbridge NIXL READ ≥ 0.95× the bandwidth of NIXL's Python binding"),
    ]:
        if family not in families:
            goals.append(Goal(family, text, "not measured in this run", None))
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
                    "Load average (1 min) at start / end",
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
    for n in SIZES:
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
    lines = [
        "## 1. Lease bookkeeping",
        "",
        "`io.kvbridge.lease.LeaseTable` (hash index + red-black tree ordered by deadline) against two"
        " baselines written for the comparison in `io.kvbridge.benchmarks.lease`, all over a"
        " `ManualClock`, with the same work per lease: a `SecureRandom` token, a constant-time token"
        " check, a deadline capped by the maximum lifetime, a `LeaseEnd` snapshot per ended lease, one"
        " lock per call.",
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
        "Ratios are *baseline time ÷ LeaseTable time*: above 1 LeaseTable is cheaper, below 1 it is"
        " dearer. Leases are granted one lease-duration ÷ n apart, so the population spans one lease"
        " duration (30 s).",
        "",
        "### Sweep that finds nothing due (idle sweep)",
        "",
        lease_compare_table(
            res,
            "lease.LeaseBookBenchmark.sweepIdle",
            lambda n, c: (
                ("≥ 1,000× vs (b)", ratio(c["FULL_SCAN"], c["TABLE"]) >= IDLE_SWEEP_GOAL)
                if n == IDLE_SWEEP_SIZE and c["FULL_SCAN"] and c["TABLE"]
                else ("—", None)
            ),
        ),
        "",
        "### Sweep that finds 16 expired leases",
        "",
        "Before each timed sweep (untimed) 16 new leases are granted one spacing apart, so exactly the"
        " 16 oldest are due and the population stays at n; after it (untimed) the benchmark checks"
        " those 16 ended.",
        "",
        lease_compare_table(res, "lease.LeaseSweepBenchmark.sweepExpired"),
        "",
        "### Grant + acknowledge (one lease granted, then read-acknowledged; population stays at n)",
        "",
        lease_compare_table(
            res,
            "lease.LeaseBookBenchmark.grantAndAcknowledge",
            lambda n, c: ("< 2 µs (1 µs each)", c["TABLE"].median < 2 * PER_OP_GOAL_NS)
            if c["TABLE"]
            else ("—", None),
        ),
        "",
        "### Grant and acknowledge timed apart (LeaseTable only)",
        "",
        "Batches of 64 per timed invocation; the other half of the pair runs untimed around it.",
        "",
    ]
    rows = []
    for n in SIZES:
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
    lines.append(
        table(["live leases", "grant", "< 1 µs", "acknowledge", "< 1 µs"], rows)
        if rows
        else NO_RESULTS
    )
    lines += [
        "",
        "### Renew (heartbeat)",
        "",
        "Heartbeats visit live leases in grant order while the clock moves half a spacing each, so"
        " every renewal really extends a deadline: in LeaseTable it moves the soonest lease to the"
        " back of the tree; in the baselines it updates a field in place (which is what breaks (a)).",
        "",
        lease_compare_table(
            res,
            "lease.LeaseBookBenchmark.renew",
            lambda n, c: ("< 1 µs", c["TABLE"].median < PER_OP_GOAL_NS) if c["TABLE"] else ("—", None),
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
    for shape in SHAPES:
        base = res.get(f"transfer.{bench}.rawCopy", shape=shape)
        subj = res.get(f"transfer.{bench}.transportRead", shape=shape)
        if not base and not subj:
            continue
        b = shape_bytes(shape)
        r = ratio(base, subj)
        applies = shape_block(shape) >= (1 << 20)
        row = [
            shape.replace("x", " × "),
            f"{b / (1 << 20):g} MiB",
            f"{fmt_ns(base.median)}{base.spread()}, {fmt_gbps(b, base.median)}" if base else "—",
            f"{fmt_ns(subj.median)}{subj.spread()}, {fmt_gbps(b, subj.median)}" if subj else "—",
            fmt_ratio(r),
            f"≥ {goal}×" if applies else "—",
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


def section_fake(res):
    return "\n".join(
        [
            "## 2. Transfer bandwidth on the fake connector",
            "",
            "A decode agent READs a prefill agent's blocks through `io.kvbridge.fake.FakeTransport`"
            " (two agents on one `FakeFabric`; post → poll `status` until DONE → release; the fabric"
            " copies on its executor thread, as the `fake` connector does), against a raw copy of the"
            " same bytes out of the same prefill region: one `ByteBuffer` bulk put per block into a heap"
            " buffer of the decode region's size. Both regions are heap `ByteBuffer`s (what the fake"
            " allocates). One descriptor per block, blocks back to back, at most 256 MiB per request."
            " The ratio is transport bandwidth ÷ raw copy bandwidth (= raw time ÷ transport time).",
            "",
            "The goal is checked on the READ whose caller spins on `status` (as the NIXL comparison"
            " does on both sides). The last two columns repeat the READ with the caller parking"
            " 20 µs between polls: the difference shows how much of the gap comes from the poller"
            " competing with the fabric's copier thread for the cores (two on the shared machine);"
            " `status` itself reads the transfer's state without taking the copy lock.",
            "",
            transfer_table(
                res, "FakeReadBenchmark", FAKE_GOAL,
                "raw copy (time, bandwidth)", "fake READ, spinning poll (time, bandwidth)",
                ("transportReadParked", "fake READ, parked poll"),
            ),
            "",
            "Reproduce: `" + jmh_command(res, "FakeReadBenchmark", {"shape": "1MiBx16"}) + "`",
        ]
    )


def section_nixl(res):
    lines = ["## 3. Transfer bandwidth and latency on NIXL", ""]
    rows = nixl_rows(res)
    if not rows:
        lines += [
            "> **Placeholder — not measured in this run.** "
            + (
                res.run.get("nixl_status")
                or "The NIXL benchmarks ran but produced no comparable result; see"
                " `benchmarks/target/results/jmh-nixl.log`."
            ),
            "",
            "Plan, as it will run once a kvbridge NIXL `Transport` exists: the same READ pattern and"
            " shapes as section 2 through `connector-nixl`'s transport (host memory, UCX backend, two"
            " agents in one JVM; JMH class `io.kvbridge.benchmarks.transfer.NixlReadBenchmark`,"
            " reusing `ReadPair`), and the same pattern with NIXL's own Python binding from the same"
            " wheel (`benchmarks/python/nixl_read_bench.py`, run from a venv under `benchmarks/target/`"
            " holding only the `nixl-cu13` wheel installed with `--no-deps` and `numpy`, the one"
            " module the binding imports; no torch). The report then shows, per shape, both"
            " bandwidths and their ratio against the goal **≥ 0.95× of the Python binding**, and the"
            " per-request time of the smallest shape (16 KiB × 1) against **no worse than the Python"
            " binding**.",
        ]
        if res.nixl_python:
            lines += ["", "Python binding alone, measured in this run (" + res.nixl_python["binding"] + "):", ""]
            lines.append(
                table(
                    ["block × blocks", "time/request", "bandwidth"],
                    [
                        [r["shape"].replace("x", " × "), fmt_ns(r["us_per_request"] * 1e3), f"{r['gbps']:.2f} GB/s"]
                        for r in res.nixl_python["results"]
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
                shape.replace("x", " × "),
                f"{fmt_ns(pn)}, {fmt_gbps(b, pn)}",
                f"{fmt_ns(j.median)}{j.spread()}, {fmt_gbps(b, j.median)}",
                fmt_ratio(r),
                f"≥ {NIXL_BANDWIDTH_GOAL}×",
                verdict(r >= NIXL_BANDWIDTH_GOAL),
            ]
        )
    lines += [
        "The same READ pattern and shapes as section 2, host memory, UCX backend, two agents in one"
        " process, with the same UCX environment on both sides"
        f" (`UCX_TLS={res.nixl_python['machine'].get('ucx_tls') or 'default'}`):",
        "",
        "- **kvbridge NIXL** — `io.kvbridge.nixl.NixlTransport` (`NixlReadBenchmark`, JMH), the"
        " connector's default options but `nixl.memory=dram`: per request `post` (pairing and"
        " registration checks, `nixl_capi_check_remote_md`, a transfer request created from the two"
        " descriptor lists, posted), `status` polled until DONE, `release`.",
        f"- **Python binding** — {res.nixl_python['binding']} from the same wheel"
        " (`benchmarks/python/nixl_read_bench.py`, mode"
        f" `{res.nixl_python.get('mode', '?')}`): per request `initialize_xfer` from two descriptor"
        " lists built once, `transfer`, `check_xfer_state` until DONE, `release_xfer_handle`; median"
        " of 5 rounds of 0.5 s after a 0.5 s warm-up.",
        "",
        "Ratio: kvbridge bandwidth ÷ Python binding bandwidth (= Python time ÷ kvbridge time).",
        "",
        table(
            ["block × blocks", "Python binding", "kvbridge NIXL", "ratio", "goal", "result"], out
        ),
        "",
        "Reproduce the Java side: `UCX_TLS=self,sm,tcp UCX_NET_DEVICES=lo "
        + jmh_command(res, "NixlReadBenchmark", {"shape": "1MiBx16"})
        + " -jvmArgsAppend '-Xms1g -Xmx1g -Dkvbridge.nixl.home=connector-nixl/target/nixl/lib'`;"
        " the Python side: `UCX_TLS=self,sm,tcp UCX_NET_DEVICES=lo benchmarks/target/nixl-venv/bin/python"
        " benchmarks/python/nixl_read_bench.py --out nixl-python.json`.",
    ]
    return "\n".join(lines)


def section_e2e(res):
    lines = ["## 4. End to end: the sample app's P/D path", ""]
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
        rows.append(
            [
                connector,
                f"{1e9 / co.mean:,.0f}",
                f"{1e9 / pd.mean:,.0f}",
                f"{fmt_ns(co.median)} / {fmt_ns(co.p99)}",
                f"{fmt_ns(pd.median)} / {fmt_ns(pd.p99)}",
                f"{fmt_ns(pd.median - co.median)} / {fmt_ns(pd.p99 - co.p99)}",
            ]
        )
    lines += [
        res.run.get("e2e_description", ""),
        "",
        table(
            [
                "connector",
                "colocated requests/s",
                "P/D requests/s",
                "colocated p50 / p99",
                "P/D p50 / p99",
                "added latency p50 / p99",
            ],
            rows,
        ),
    ]
    return "\n".join(lines)


def read_findings(path):
    """Sections '## <family>' of the findings file, keyed by family."""
    if not path or not os.path.exists(path):
        return {}
    found, current = {}, None
    with open(path) as f:
        for line in f:
            m = re.match(r"^## (\S+)\s*$", line)
            if m:
                current = m.group(1)
                found[current] = []
            elif current:
                found[current].append(line.rstrip("\n"))
    return {k: "\n".join(v).strip() for k, v in found.items()}


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
                f"JFR samples of `{prof['benchmark']}` ({prof['params']}): {prof['samples']}"
                f" samples, {prof.get('native_samples', 0)} of them of the benchmark thread in"
                " native code (`jdk.NativeMethodSample`), the rest `jdk.ExecutionSample`;"
                f" measurement iterations only (`{prof['command']}`, then"
                " `jfr print --events jdk.ExecutionSample,jdk.NativeMethodSample`):",
                "",
                "Top frames (self):",
                "",
                table(["share", "frame"], [[f"{s:.1f}%", f"`{fr}`"] for fr, s in prof["self"]]),
                "",
                "On the stack (inclusive, benchmark harness frames left out):",
                "",
                table(["share", "frame"], [[f"{s:.1f}%", f"`{fr}`"] for fr, s in prof["inclusive"]]),
                "",
            ]
            if prof.get("stacks"):
                lines += [
                    "Most frequent stacks (innermost first, five frames):",
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
        else:
            lines += ["_No profile recorded for this goal in this run._", ""]
        note = findings.get(g.family)
        if note:
            lines += ["**Why, and what would fix it.** " + note, ""]
    return "\n".join(lines).rstrip()


def write(args):
    res = Results(args.results)
    goals = all_goals(res)
    findings = read_findings(args.findings)
    parts = [
        "# kvbridge benchmarks",
        "",
        "_Generated by `benchmarks/report.py` from the results of `benchmarks/run.sh`; do not edit by"
        " hand — rerun instead._",
        "",
        "Reproduce everything (build, all benchmarks, profiles of missed goals, this file):",
        "",
        "```",
        res.run.get("command", "benchmarks/run.sh"),
        "```",
        "",
        "Raw results: `benchmarks/target/results/` (`jmh.json`, `jmh-nixl.json`, `jmh-e2e.json` from"
        " JMH `-rf json`; `nixl-python.json` from the Python binding; `jfr/` profile summaries; the"
        " JMH logs).",
        "",
        section_summary(goals),
        "",
        section_machine(res),
        "",
        section_lease(res),
        "",
        section_fake(res),
        "",
        section_nixl(res),
        "",
        section_e2e(res),
        "",
        section_missed(res, goals, findings),
        "",
    ]
    if findings.get("notes"):
        parts += ["## Notes", "", findings["notes"], ""]
    with open(args.out, "w") as f:
        f.write("\n".join(parts))


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


def frame_name(frame):
    method = frame["method"]
    return f"{method['type']['name'].replace('/', '.')}.{method['name']}"


def summarize_jfr(args):
    proc = subprocess.run(
        ["jfr", "print", "--json", "--events", "jdk.ExecutionSample,jdk.NativeMethodSample", args.jfr],
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
        useful = useful[:5]
        stacks[" ← ".join(useful)] += 1
    total = sum(self_counts.values()) or 1
    summary = {
        "benchmark": args.benchmark,
        "params": args.params,
        "command": args.command,
        "samples": total,
        "native_samples": kinds["jdk.NativeMethodSample"],
        "self": [(n, 100.0 * c / total) for n, c in self_counts.most_common(args.top)],
        "inclusive": [(n, 100.0 * c / total) for n, c in incl_counts.most_common(args.top)],
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
    p.add_argument("--top", type=int, default=12)
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

#!/usr/bin/env python3
"""READ bandwidth and per-request time of NIXL's own Python binding, host memory, two agents.

The same pattern as kvbridge's NIXL READ benchmark, for the same shapes: a decode agent reads a
prefill agent's blocks (one descriptor per block, laid out back to back in one registered region
per agent) with the UCX backend; each request is created, posted, polled until DONE and released.
Writes one JSON document:

  {"binding": "nixl_cu13 <version>", "mode": ..., "rounds": ..., "round_seconds": ...,
   "warmup_seconds": ..., "machine": {...},
   "results": [{"shape": "1MiBx16", "bytes": ..., "requests": ..., "seconds": [per round ...],
                "us_per_request": median, "gbps": median}]}

Needs only the nixl-cu13 wheel and numpy (which the binding imports). Runs without a GPU.
Usage: nixl_read_bench.py --out FILE [--shapes 16KiBx1,1MiBx16] [--seconds 0.5] [--rounds 5]
       nixl_read_bench.py --serve     rounds on request, interleaved with a caller's own trials
"""

import argparse
import gc
import ctypes
import importlib
import json
import os
import platform
import re
import statistics
import sys
import time

SHAPES = [
    "16KiBx1", "16KiBx16", "16KiBx256",
    "256KiBx1", "256KiBx16", "256KiBx256",
    "1MiBx1", "1MiBx16", "1MiBx256",
    "16MiBx1", "16MiBx16",
]
MAX_TOTAL_BYTES = 256 << 20
UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20}


def parse_shape(text):
    m = re.fullmatch(r"(\d+)(B|KiB|MiB)x(\d+)", text)
    if not m:
        raise SystemExit(f"a read shape looks like 16KiBx256, got {text!r}")
    block, blocks = int(m.group(1)) * UNITS[m.group(2)], int(m.group(3))
    if block * blocks > MAX_TOTAL_BYTES:
        raise SystemExit(f"{text} exceeds the cap of {MAX_TOTAL_BYTES} bytes per request")
    return block, blocks


def load_binding():
    for name in ("nixl_cu13", "nixl_cu12", "nixl"):
        try:
            return importlib.import_module(name), name
        except ImportError:
            continue
    raise SystemExit("no NIXL Python binding (nixl_cu13, nixl_cu12 or nixl) is importable")


class Region:
    """Page-aligned host memory from libc, freed on close."""

    libc = ctypes.CDLL(None)
    libc.aligned_alloc.restype = ctypes.c_void_p
    libc.aligned_alloc.argtypes = [ctypes.c_size_t, ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]

    def __init__(self, size, fill):
        self.size = size
        self.address = self.libc.aligned_alloc(4096, size)
        if not self.address:
            raise MemoryError(f"cannot allocate {size} bytes")
        ctypes.memset(self.address, fill, size)

    def close(self):
        self.libc.free(self.address)


class Pair:
    """A decode and a prefill agent with one registered region each of a shape's size; decode knows
    prefill. Per request: a READ of every block, made from descriptor lists built once (mode
    create) or from lists prepared once (mode prepped), posted, polled until DONE, released."""

    def __init__(self, nixl, shape, mode):
        self.shape, self.mode = shape, mode
        self.block, self.blocks = parse_shape(shape)
        total = self.block * self.blocks
        config = nixl.nixl_agent_config(backends=["UCX"])
        self.decode = nixl.nixl_agent("decode", config)
        self.prefill = nixl.nixl_agent("prefill", config)
        self.dst, self.src = Region(total, 0), Region(total, 0x5A)
        self.reg_d = self.decode.get_reg_descs([(self.dst.address, total, 0, "")], "DRAM")
        self.reg_p = self.prefill.get_reg_descs([(self.src.address, total, 0, "")], "DRAM")
        self.decode.register_memory(self.reg_d)
        self.prefill.register_memory(self.reg_p)
        self.remote = self.decode.add_remote_agent(self.prefill.get_agent_metadata())
        block, blocks = self.block, self.blocks
        local_descs = [(self.dst.address + i * block, block, 0) for i in range(blocks)]
        remote_descs = [(self.src.address + i * block, block, 0) for i in range(blocks)]
        self.local_x = self.decode.get_xfer_descs(local_descs, "DRAM")
        self.remote_x = self.decode.get_xfer_descs(remote_descs, "DRAM")
        if mode == "prepped":
            self.local_side = self.decode.prep_xfer_dlist("", self.local_x)
            self.remote_side = self.decode.prep_xfer_dlist(self.remote, self.remote_x)
            self.indices = list(range(blocks))

    def request(self):
        decode = self.decode
        if self.mode == "prepped":
            handle = decode.make_prepped_xfer(
                "READ", self.local_side, self.indices, self.remote_side, self.indices
            )
        else:
            handle = decode.initialize_xfer("READ", self.local_x, self.remote_x, self.remote)
        state = decode.transfer(handle)
        while state == "PROC":
            state = decode.check_xfer_state(handle)
        decode.release_xfer_handle(handle)
        if state != "DONE":
            raise RuntimeError(f"READ of {self.shape} ended in state {state}")

    def warm_up(self, seconds):
        """Requests for {@code seconds}, untimed; then checks the bytes arrived."""
        deadline = time.perf_counter() + seconds
        self.request()
        while time.perf_counter() < deadline:
            self.request()
        if ctypes.string_at(self.dst.address, 64) != b"\x5a" * 64:
            raise RuntimeError(f"READ of {self.shape} did not reproduce the source bytes")

    def timed_round(self, seconds):
        """Requests for at least {@code seconds}: (seconds per request, requests)."""
        n, start = 0, time.perf_counter()
        while True:
            self.request()
            n += 1
            elapsed = time.perf_counter() - start
            if elapsed >= seconds:
                return elapsed / n, n

    def close(self):
        """Releases everything and drops every reference to NIXL objects: a descriptor list kept
        alive keeps its agent alive, and with it the agent's progress thread, which would go on
        taking CPU from whatever runs next on this machine."""
        if self.mode == "prepped":
            self.decode.release_dlist_handle(self.local_side)
            self.decode.release_dlist_handle(self.remote_side)
            del self.local_side, self.remote_side
        self.decode.remove_remote_agent("prefill")
        self.decode.deregister_memory(self.reg_d)
        self.prefill.deregister_memory(self.reg_p)
        del self.local_x, self.remote_x, self.reg_d, self.reg_p
        del self.decode, self.prefill
        gc.collect()
        self.dst.close()
        self.src.close()


def bench_shape(nixl, shape, seconds, rounds, mode):
    pair = Pair(nixl, shape, mode)
    try:
        pair.warm_up(seconds)
        per_round, requests = [], 0
        for _ in range(rounds):
            per_request, n = pair.timed_round(seconds)
            per_round.append(per_request)
            requests += n
        median = statistics.median(per_round)
        return {
            "shape": shape,
            "bytes": pair.block * pair.blocks,
            "requests": requests,
            "seconds_per_request": per_round,
            "us_per_request": median * 1e6,
            "gbps": pair.block * pair.blocks / median / 1e9,
        }
    finally:
        pair.close()


def serve(nixl, binding):
    """Runs one round per command line on stdin and answers one JSON line per round on stdout, so a
    caller can interleave these rounds with its own trials. A command:
      {"shape": "16KiBx1", "mode": "prepped", "seconds": 0.5, "warmup_seconds": 0.2}
    Each round creates its agents, warms up, times one round and destroys them again: between
    rounds no agent (and none of its progress threads) runs beside the caller's trials."""
    print(json.dumps({"binding": binding, "ucx_tls": os.environ.get("UCX_TLS", "")}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        command = json.loads(line)
        try:
            pair = Pair(nixl, command["shape"], command["mode"])
            try:
                pair.warm_up(command["warmup_seconds"])
                per_request, n = pair.timed_round(command["seconds"])
            finally:
                pair.close()
                del pair  # the agents must be gone before the caller's next trial
            block, blocks = parse_shape(command["shape"])
            answer = {
                "shape": command["shape"],
                "mode": command["mode"],
                "bytes": block * blocks,
                "requests": n,
                "us_per_request": per_request * 1e6,
                "gbps": block * blocks / per_request / 1e9,
            }
        except (RuntimeError, SystemExit, KeyError, ValueError) as e:
            answer = {"error": f"{type(e).__name__}: {e}"}
        print(json.dumps(answer), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="where to write the JSON results (required unless --serve)")
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--seconds", type=float, default=0.5, help="length of one round")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds per shape")
    parser.add_argument(
        "--mode",
        choices=["create", "prepped"],
        default="create",
        help="create: a transfer request from two descriptor lists per request (what a"
        " Transport.post does); prepped: from descriptor lists prepared once",
    )
    parser.add_argument(
        "--serve",
        action="store_true",
        help="run rounds on request, one JSON command per line on stdin (see serve())",
    )
    args = parser.parse_args()
    nixl, module = load_binding()
    version = importlib.metadata.version(module.replace("_", "-")) if module != "nixl" else "?"
    if args.serve:
        serve(nixl, f"{module} {version}")
        return
    if not args.out:
        parser.error("--out is required unless --serve")
    results = []
    for shape in args.shapes.split(","):
        result = bench_shape(nixl, shape, args.seconds, args.rounds, args.mode)
        print(f"{shape:>12}  {result['us_per_request']:12.1f} us/request"
              f"  {result['gbps']:8.2f} GB/s", file=sys.stderr)
        results.append(result)
    document = {
        "binding": f"{module} {version}",
        "mode": args.mode,
        "rounds": args.rounds,
        "round_seconds": args.seconds,
        "warmup_seconds": args.seconds,
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "ucx_tls": os.environ.get("UCX_TLS", ""),
        },
        "results": results,
    }
    with open(args.out, "w") as f:
        json.dump(document, f, indent=2)


if __name__ == "__main__":
    import importlib.metadata

    main()

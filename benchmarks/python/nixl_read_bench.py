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
"""

import argparse
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


def bench_shape(nixl, shape, seconds, rounds, mode):
    block, blocks = parse_shape(shape)
    total = block * blocks
    config = nixl.nixl_agent_config(backends=["UCX"])
    decode = nixl.nixl_agent("decode", config)
    prefill = nixl.nixl_agent("prefill", config)
    dst, src = Region(total, 0), Region(total, 0x5A)
    try:
        reg_d = decode.get_reg_descs([(dst.address, total, 0, "")], "DRAM")
        reg_p = prefill.get_reg_descs([(src.address, total, 0, "")], "DRAM")
        decode.register_memory(reg_d)
        prefill.register_memory(reg_p)
        remote = decode.add_remote_agent(prefill.get_agent_metadata())
        local_descs = [(dst.address + i * block, block, 0) for i in range(blocks)]
        remote_descs = [(src.address + i * block, block, 0) for i in range(blocks)]
        local_x = decode.get_xfer_descs(local_descs, "DRAM")
        remote_x = decode.get_xfer_descs(remote_descs, "DRAM")
        if mode == "prepped":
            local_side = decode.prep_xfer_dlist("", local_x)
            remote_side = decode.prep_xfer_dlist(remote, remote_x)
            indices = list(range(blocks))

        def one_request():
            if mode == "prepped":
                handle = decode.make_prepped_xfer("READ", local_side, indices, remote_side, indices)
            else:
                handle = decode.initialize_xfer("READ", local_x, remote_x, remote)
            state = decode.transfer(handle)
            while state == "PROC":
                state = decode.check_xfer_state(handle)
            decode.release_xfer_handle(handle)
            if state != "DONE":
                raise RuntimeError(f"READ of {shape} ended in state {state}")

        # Warm-up round, untimed.
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            one_request()
        if ctypes.string_at(dst.address, 64) != b"\x5a" * 64:
            raise RuntimeError(f"READ of {shape} did not reproduce the source bytes")

        per_round, requests = [], 0
        for _ in range(rounds):
            n, start = 0, time.perf_counter()
            while True:
                one_request()
                n += 1
                elapsed = time.perf_counter() - start
                if elapsed >= seconds:
                    break
            per_round.append(elapsed / n)
            requests += n
        median = statistics.median(per_round)
        return {
            "shape": shape,
            "bytes": total,
            "requests": requests,
            "seconds_per_request": per_round,
            "us_per_request": median * 1e6,
            "gbps": total / median / 1e9,
        }
    finally:
        decode.remove_remote_agent("prefill")
        decode.deregister_memory(reg_d)
        prefill.deregister_memory(reg_p)
        del decode, prefill
        dst.close()
        src.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="where to write the JSON results")
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
    args = parser.parse_args()
    nixl, module = load_binding()
    version = importlib.metadata.version(module.replace("_", "-")) if module != "nixl" else "?"
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

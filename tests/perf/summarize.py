#!/usr/bin/env python3
"""Turns runrun_bench --json output (one or more runs of the same cases) into Markdown tables.

Why: docs/perf-notes/ records repeated runs on a noisy shared machine; this keeps every figure
traceable to the JSON lines the benchmark printed. Per (op, bytes, tensors, fusion threshold) it
shows the median over runs of each run's median time, the best minimum over runs, the
runtime/raw ratio of those medians, the ratio of the best minima (the steadier figure when
other processes share the cores), the ratio of each run separately (to show the noise) and
the bus bandwidth of both sides.

Usage: summarize.py RUN.jsonl [RUN.jsonl ...]
"""
import json
import statistics
import sys
from collections import OrderedDict


def load(paths):
    rows = OrderedDict()
    for path in paths:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                obj = json.loads(line)
                if obj["op"] == "run":
                    continue
                key = (obj["op"], obj["bytes"], obj["tensors"], obj["fusion_threshold"])
                rows.setdefault(key, []).append(obj)
    return rows


def human(n):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


def fmt_us(us):
    return f"{us / 1000:.2f} ms" if us >= 10000 else f"{us:.1f} us"


def table(rows):
    print("| op | bytes | tensors | fusion thr. | runtime median (min) | raw median (min) "
          "| runtime/raw | min/min | per run | busbw runtime / raw GB/s | one raw call |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for (op, nbytes, tensors, threshold), runs in rows.items():
        rt = statistics.median(r["runtime_us"] for r in runs)
        raw = statistics.median(r["raw_us"] for r in runs)
        rt_min = min(r["runtime_min_us"] for r in runs)
        raw_min = min(r["raw_min_us"] for r in runs)
        busbw = statistics.median(r["busbw"] for r in runs)
        raw_busbw = statistics.median(r["raw_busbw"] for r in runs)
        per_run = " / ".join(f"{r['ratio']:.2f}" for r in runs)
        one = ""
        if "raw_one_call_us" in runs[0]:
            one = fmt_us(statistics.median(r["raw_one_call_us"] for r in runs))
        print(f"| {op} | {human(nbytes)} | {tensors} | {human(threshold)} | {fmt_us(rt)} "
              f"({fmt_us(rt_min)}) | {fmt_us(raw)} ({fmt_us(raw_min)}) | {rt / raw:.2f} "
              f"| {rt_min / raw_min:.2f} | {per_run} | {busbw:.3f} / {raw_busbw:.3f} | {one} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    table(load(sys.argv[1:]))

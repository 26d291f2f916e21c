"""Tables of a scale_bench.sh run: per layout, every allreduce size with runrun over Gloo, raw
Gloo, torch.distributed's gloo and runrun over MPI (median microseconds, and bus bandwidth as a
fraction of the shaped link), the cached step of 100 tensors and the MLP training step; then
one line per layout for the 4-byte latency and the largest size's link fraction; then the cost
model of docs/scaling.md, fitted on the smallest layout, against every layout's measurements.

Usage: python3 tests/perf/scale/summarize_scale.py --rate 1gbit OUT_DIR LAYOUT...
Thread-safety: a script.
"""

import argparse
import json
import math
import os


def rate_bytes_per_s(text):
    if text == "none":
        return None
    units = {"kbit": 1e3, "mbit": 1e6, "gbit": 1e9}
    for unit, scale in units.items():
        if text.lower().endswith(unit):
            return float(text[: -len(unit)]) * scale / 8
    raise SystemExit(f"summarize_scale: cannot read the rate '{text}' (use e.g. 1gbit, 500mbit)")


def rows(path):
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.startswith("{")]


def human(nbytes):
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale and nbytes % scale == 0:
            return f"{nbytes // scale} {unit}"
    return f"{nbytes} B"


def ranks_of(layout):
    hosts, _, per_host = layout.partition("x")
    return int(hosts) * int(per_host or 1)


def link_fraction(nbytes, us, ranks, link):
    """Bus bandwidth (2 (N-1)/N of the buffer each way per rank) over the link rate."""
    if not us or not link:
        return None
    return 2 * (ranks - 1) / ranks * nbytes / (us * 1e-6) / link


def small_steps(ranks):
    """Steps of a small allreduce (and of a negotiation round) at N ranks: one direct step up
    to 4 ranks, else recursive doubling (log2 of the largest power of two, +2 to fold)."""
    if ranks <= 4:
        return 1
    group = 1 << (ranks.bit_length() - 1)
    return int(math.log2(group)) + (2 if group != ranks else 0)


def large_time_s(ranks, nbytes, alpha_s, link):
    """A large allreduce: direct reduce-scatter + allgather up to 4 ranks (2 steps), else
    halving-doubling (2 log2 P steps, plus the fold's two whole-buffer steps)."""
    group = 1 << (ranks.bit_length() - 1)
    if ranks <= 4:
        return 2 * alpha_s + 2 * (ranks - 1) / ranks * nbytes / link
    fold = 0 if group == ranks else 2 * (alpha_s + nbytes / link)
    return 2 * math.log2(group) * alpha_s + 2 * (group - 1) / group * nbytes / link + fold


def model_table(overview, link, rate):
    """The model fitted on the first layout: alpha = raw Gloo's 4-byte allreduce (one step),
    the runtime's fixed cost = its 4-byte op minus a negotiation round and an allreduce."""
    first = overview[0]
    if not first[2] or not link:
        return
    alpha_s = first[2]["raw_us"] * 1e-6 / small_steps(first[1])
    fixed_s = first[2]["runtime_us"] * 1e-6 - 2 * small_steps(first[1]) * alpha_s
    print(f"\n## Model against measurements, links {rate}\n")
    print(f"Fitted on {first[0]}: alpha {alpha_s * 1e6:.0f} us per step (raw Gloo's 4 B), the "
          f"runtime's fixed cost {fixed_s * 1e6:.0f} us per op.\n")
    print("| layout | ranks | steps (small) | 4 B measured us | 4 B model us | largest | "
          "measured ms | model ms |")
    print("|---|---|---|---|---|---|---|---|")
    for layout, ranks, small, _, large_size, large in overview:
        steps = small_steps(ranks)
        predicted_small = (fixed_s + 2 * steps * alpha_s) * 1e6
        predicted_large = (fixed_s + large_time_s(ranks, large_size, alpha_s, link)) * 1e3 \
            if large_size else None
        print(f"| {layout} | {ranks} | {steps} | {cell(small and small['runtime_us'])} | "
              f"{predicted_small:.0f} | {human(large_size) if large_size else '—'} | "
              f"{cell(large and large['runtime_us'] / 1e3, '{:.1f}')} | "
              f"{cell(predicted_large, '{:.1f}')} |")


def cell(value, fmt="{:.0f}"):
    return "—" if value is None else fmt.format(value)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rate", required=True)
    parser.add_argument("out")
    parser.add_argument("layouts", nargs="+")
    args = parser.parse_args()
    link = rate_bytes_per_s(args.rate)
    overview = []
    for layout in args.layouts:
        ranks = ranks_of(layout)
        bench = {r["bytes"]: r for r in rows(f"{args.out}/{layout}-gloo-bench.jsonl")
                 if r.get("op") == "allreduce"}
        torch_gloo = {(r["op"], r["bytes"]): r
                      for r in rows(f"{args.out}/{layout}-gloo-torch.jsonl")
                      if r.get("op") != "run"}
        torch_mpi = {(r["op"], r["bytes"]): r for r in rows(f"{args.out}/{layout}-mpi-torch.jsonl")
                     if r.get("op") != "run"}
        print(f"\n## {layout} ({ranks} ranks), links {args.rate}: median us (busbw / link)\n")
        print("| size | runrun gloo | raw gloo | torch gloo | runrun mpi | runrun gloo / torch |")
        print("|---|---|---|---|---|---|")
        for nbytes in sorted(bench):
            b = bench[nbytes]
            t = torch_gloo.get(("allreduce", nbytes), {})
            m = torch_mpi.get(("allreduce", nbytes), {})
            ours = b["runtime_us"]

            def with_link(us):
                fraction = link_fraction(nbytes, us, ranks, link)
                return cell(us) + ("" if fraction is None or nbytes < (1 << 20)
                                   else f" ({fraction:.2f})")

            torch_us = t.get("torch_us")
            print(f"| {human(nbytes)} | {with_link(ours)} | {with_link(b['raw_us'])} | "
                  f"{with_link(torch_us)} | {with_link(m.get('runrun_us'))} | "
                  f"{cell(t.get('ratio'), '{:.2f}')} |")
        for op, label in (("allreduce.many", "100 × 4 B, one step"), ("mlp_step", "MLP step")):
            t = next((r for (o, _), r in torch_gloo.items() if o == op), {})
            m = next((r for (o, _), r in torch_mpi.items() if o == op), {})
            print(f"| {label} | {cell(t.get('runrun_us'))} | — | {cell(t.get('torch_us'))} | "
                  f"{cell(m.get('runrun_us'))} | {cell(t.get('ratio'), '{:.2f}')} |")
        small = bench.get(min(bench)) if bench else None
        large_size = max(bench) if bench else None
        small_torch = torch_gloo.get(("allreduce", min(bench))) if bench else None
        overview.append((layout, ranks, small, small_torch,
                         large_size, bench.get(large_size) if bench else None))
    print(f"\n## Overview, links {args.rate}\n")
    print("| layout | ranks | ⌈log2 N⌉ | 4 B runrun gloo us | 4 B torch gloo us | largest size | "
          "runrun gloo busbw / link |")
    print("|---|---|---|---|---|---|---|")
    for layout, ranks, small, torch_small, large_size, large in overview:
        fraction = link_fraction(large_size, large["runtime_us"], ranks, link) if large else None
        print(f"| {layout} | {ranks} | {math.ceil(math.log2(ranks))} | "
              f"{cell(small and small['runtime_us'])} | "
              f"{cell(torch_small and torch_small.get('torch_us'))} | "
              f"{human(large_size) if large_size else '—'} | {cell(fraction, '{:.2f}')} |")
    model_table(overview, link, args.rate)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Runs runrun_bench's allreduce under `runrun --gloo` and `runrun --mpi` in alternation, round
after round, and prints per size the ratio gloo / mpi of each round's medians, then the median
and the spread of those ratios over rounds.

Why: issue 10 point 6's "within 1.3x of runrun over MPI" compares two runs that cannot share one
process; on a shared machine a single pair says little, so the pair is repeated back to back and
only ratios of neighbouring runs are compared. Extra configurations (e.g. the shared-memory
path's slot algorithm, or another build's runrun_bench, e.g. the commit before a change) join
each round as further columns. A program, not a test.

Every rank runs on this host, so runrun_bench runs with --shared-clock (a block counts from the
last rank's barrier exit: gloo's TCP barrier exits with more skew than MPI's) unless
--per-rank-clock.

Usage: gloo_vs_mpi.py --launcher build/launcher/runrun --bench build/tests/perf/runrun_bench
           [--np 2] [--rounds 5] [--sizes 4,1M,64M] [--extra NAME=VAR=VALUE ...]
           [--compare NAME=BENCH ...] [--json] [--per-rank-clock]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def run(launcher, mode, np, bench, sizes, iters, env_extra, clock):
    env = dict(os.environ)
    env.update(env_extra)
    with tempfile.TemporaryDirectory() as folder:
        cmd = [launcher, "--" + mode, "-np", str(np), "--output-filename", folder, bench,
               "--json", "--cases", "allreduce", "--sizes", sizes, "--iters", str(iters)] + clock
        done = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True, timeout=900)
        if done.returncode != 0:
            sys.exit(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stderr[-3000:]}")
        with open(os.path.join(folder, "rank.0", "stdout")) as f:
            rows = [json.loads(line) for line in f if line.strip()]
    return {row["bytes"]: row for row in rows if row["op"] == "allreduce"}


def load():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--launcher", required=True)
    parser.add_argument("--bench", required=True)
    parser.add_argument("--np", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sizes", default="4,1M,64M")
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--extra", action="append", default=[],
                        help="NAME=VAR=VALUE: also run gloo with VAR=VALUE, reported as NAME")
    parser.add_argument("--compare", action="append", default=[],
                        help="NAME=BENCH: also run gloo with another runrun_bench binary (another "
                             "build, for A/B in the same rounds), reported as NAME")
    parser.add_argument("--json", action="store_true", help="one JSON object per round and size")
    parser.add_argument("--per-rank-clock", action="store_true",
                        help="time each rank from its own barrier exit (runrun_bench's default) "
                             "instead of --shared-clock")
    args = parser.parse_args()
    configs = [("gloo", "gloo", {}, args.bench), ("mpi", "mpi", {}, args.bench)]
    for spec in args.extra:
        name, var, value = spec.split("=", 2)
        configs.append((name, "gloo", {var: value}, args.bench))
    for spec in args.compare:
        name, bench = spec.split("=", 1)
        configs.append((name, "gloo", {}, bench))
    ratios = {}  # (name, bytes) -> [ratio to mpi per round]
    times = {}   # (name, bytes) -> [median us per round]
    for r in range(args.rounds):
        before = load()
        clock = [] if args.per_rank_clock else ["--shared-clock"]
        results = {name: run(args.launcher, mode, args.np, bench, args.sizes, args.iters, env,
                             clock)
                   for name, mode, env, bench in configs}
        after = load()
        for size, mpi_row in results["mpi"].items():
            for name, _, _, _ in configs:
                row = results[name][size]
                ratio = row["runtime_us"] / mpi_row["runtime_us"]
                ratios.setdefault((name, size), []).append(ratio)
                times.setdefault((name, size), []).append(row["runtime_us"])
                if args.json:
                    print(json.dumps({"round": r, "config": name, "bytes": size, "np": args.np,
                                      "runtime_us": row["runtime_us"],
                                      "runtime_min_us": row["runtime_min_us"],
                                      "ratio_to_mpi": ratio, "load": [before, after]}))
        if not args.json:
            print(f"round {r + 1}/{args.rounds} done (load {before:.1f} -> {after:.1f})",
                  file=sys.stderr)
    if args.json:
        return
    print(f"-np {args.np}, {args.rounds} rounds; median runtime us per round; ratio to mpi: "
          "median [min-max] over rounds")
    for (name, size), values in sorted(ratios.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        if name == "mpi":
            continue
        med = statistics.median(values)
        t = ", ".join(f"{x:.0f}" for x in times[(name, size)])
        m = ", ".join(f"{x:.0f}" for x in times[("mpi", size)])
        print(f"{size:>10} B {name:>10}: ratio {med:.2f} [{min(values):.2f}-{max(values):.2f}]"
              f"  ({name} {t} | mpi {m})")


if __name__ == "__main__":
    main()

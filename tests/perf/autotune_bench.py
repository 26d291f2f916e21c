"""Steps per second of a synthetic torch model with and without `runrun --autotune`.

A benchmark, never a test: it asserts nothing about time (issue 14 point 3: "never worse than
the defaults by more than the noise; measure: synthetic benchmark with and without").
The model: `--layers` Linear layers of alternating widths (gradients of several sizes, some
above and some below the fusion thresholds autotune tries) on a small batch, trained with
hvd.DistributedOptimizer. Each run trains `--steps` steps and times the last `--measure` ones
(after autotuning froze: the tuning phase itself is part of the price, reported separately as
the time of the first steps).
Usage (repository root, runrun importable, `runrun` on PATH):
    python3 tests/perf/autotune_bench.py --np 2 [--rounds 3] [--controller mpi|gloo]
runs `runrun -np N` alternately without and with --autotune, `--rounds` times each, and prints
one line per run and a side-by-side summary (median steps/s). Inside a job (what the driver
starts): `runrun -np 2 python3 tests/perf/autotune_bench.py --worker`.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def worker(args):
    import torch

    import runrun.torch as hvd

    hvd.init()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    widths = [args.width, args.width // 4]
    mods = []
    for i in range(args.layers):
        mods += [torch.nn.Linear(widths[i % 2], widths[(i + 1) % 2]), torch.nn.ReLU()]
    model = torch.nn.Sequential(*mods)
    opt = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=1e-4),
                                   named_parameters=model.named_parameters())
    x = torch.randn(args.batch, args.width)
    marks = []
    for step in range(args.steps):
        if step == args.steps - args.measure:
            hvd.barrier()
            marks.append(time.perf_counter())
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
        if step == 0:
            marks.append(time.perf_counter())
    hvd.barrier()
    marks.append(time.perf_counter())
    if hvd.rank() == 0:
        params = sum(p.numel() for p in model.parameters())
        print(json.dumps({"params": params, "tensors": len(list(model.parameters())),
                          "first_steps_s": round(marks[1] - marks[0], 3),
                          "steps_per_s": round(args.measure / (marks[2] - marks[1]), 2)}),
              flush=True)


def driver(args):
    results = {"default": [], "autotune": []}
    common = ["--width", str(args.width), "--layers", str(args.layers), "--batch",
              str(args.batch), "--steps", str(args.steps), "--measure", str(args.measure)]
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for mode in ("default", "autotune"):
                log = os.path.join(tmp, f"autotune{r}.csv")
                flags = ["--autotune", "--autotune-log-file", log] if mode == "autotune" else []
                cmd = ["runrun", f"--{args.controller}", "-np", str(args.np), *flags,
                       sys.executable, os.path.abspath(__file__), "--worker", *common]
                out = subprocess.run(cmd, check=True, capture_output=True, text=True,
                                     timeout=600).stdout
                line = next(s for s in out.splitlines() if '"steps_per_s"' in s)
                row = json.loads(line.split(":", 1)[1] if line.startswith("[") else line)
                if mode == "autotune":
                    final = [s for s in open(log) if ",final," in s]
                    row["frozen"] = final[0].strip() if final else "not frozen"
                results[mode].append(row["steps_per_s"])
                print(mode, json.dumps(row), flush=True)
    d, a = statistics.median(results["default"]), statistics.median(results["autotune"])
    print(f"np={args.np} {args.controller}: default {d:.1f} steps/s, autotune {a:.1f} steps/s "
          f"(x{a / d:.3f}); runs: default {results['default']} autotune {results['autotune']}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--worker", action="store_true", help="run as one rank of a runrun job")
    p.add_argument("--np", type=int, default=2)
    p.add_argument("--controller", default="mpi", choices=["mpi", "gloo"])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--steps", type=int, default=600)
    p.add_argument("--measure", type=int, default=200, help="timed last steps")
    args = p.parse_args()
    if args.measure >= args.steps:
        raise SystemExit("autotune_bench: --measure must be smaller than --steps")
    worker(args) if args.worker else driver(args)


if __name__ == "__main__":
    main()

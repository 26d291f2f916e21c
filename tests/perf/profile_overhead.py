"""What `runrun --profile` costs a training step (docs/benchmarks.md, "Cost of --profile").

Two measurements:
1. The hooks alone, in this process (no job needed): the calls a DistributedOptimizer step
   makes with profiling on (gradient_ready per gradient, wait_begin, wait_end, step_end), timed
   over many steps: the fixed cost per step and per gradient.
2. A/B under the launcher (`runrun --gloo -np 2 python3 tests/perf/profile_overhead.py --job`):
   one DistributedOptimizer training loop, blocks of steps alternating with the profiler
   attached and detached (the same process, model and data), median step time of each.

Prints one JSON line per measurement (rank 0). A benchmark, not a test: nothing is asserted.
"""

import argparse
import json
import statistics
import time


def hooks_only(gradients, steps=20000):
    from runrun.common.profile import StepProfiler
    profiler = StepProfiler(interval=0)
    profiler._exchange_every = steps * 10  # no collective: this process only
    start = time.perf_counter()
    for _ in range(steps):
        for _ in range(gradients):
            profiler.gradient_ready(4096)
        profiler.wait_begin()
        profiler.wait_end()
        profiler.step_end()
    per_step = (time.perf_counter() - start) / steps
    return {"case": "hooks_only", "gradients": gradients, "us_per_step": per_step * 1e6}


def job(steps_per_block, rounds, width, layers):
    import torch
    import runrun.torch as hvd
    from runrun.common.profile import StepProfiler
    hvd.init()
    torch.manual_seed(0)
    blocks = []
    for _ in range(layers):
        blocks += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    model = torch.nn.Sequential(*blocks)
    optimizer = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=1e-3),
                                         named_parameters=model.named_parameters())
    data = torch.randn(64, width)
    profiler = StepProfiler(interval=0)
    times = {True: [], False: []}

    def step():
        optimizer.zero_grad()
        model(data).square().mean().backward()
        optimizer.step()

    for _ in range(5):
        step()  # warm up
    for _ in range(rounds):
        for on in (False, True):
            optimizer._profiler = profiler if on else None
            for _ in range(steps_per_block):
                start = time.perf_counter()
                step()
                times[on].append(time.perf_counter() - start)
    if hvd.rank() == 0:
        off, on = statistics.median(times[False]), statistics.median(times[True])
        print(json.dumps({"case": "job", "ranks": hvd.size(), "gradients": 2 * layers,
                          "steps": len(times[True]), "off_ms": off * 1e3, "on_ms": on * 1e3,
                          "cost_percent": (on - off) / off * 100}), flush=True)
    hvd.shutdown()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--job", action="store_true", help="the A/B under the launcher")
    parser.add_argument("--steps-per-block", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--layers", type=int, default=8)
    args = parser.parse_args()
    if args.job:
        job(args.steps_per_block, args.rounds, args.width, args.layers)
    else:
        for gradients in (16, 161):
            print(json.dumps(hooks_only(gradients)), flush=True)


if __name__ == "__main__":
    main()

"""One rank enqueuing N float32 1 KiB allreduces (100 at a time, each waited): the driver for
counting the instructions of the enqueue path with callgrind, which load does not disturb
(docs/benchmarks.md, "The core's enqueue, counted in instructions"). A benchmark, not a test.

    valgrind --tool=callgrind --callgrind-out-file=cg.out \
        "$(python3 -c 'import sys; print(sys.executable)')" tests/perf/enqueue_instructions.py 1000
    callgrind_annotate --inclusive=yes cg.out | grep -E "fast_allreduce|runrun_allreduce"
"""
import sys, torch
import runrun.torch as hvd
hvd.init()
n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
ts = [torch.ones(256) for _ in range(100)]
for it in range(n // 100):
    hs = [hvd.allreduce_async_(t, name=f"per_tensor_cost.{i}", op=hvd.Sum) for i, t in enumerate(ts)]
    for h in hs:
        hvd.synchronize(h)
hvd.shutdown()

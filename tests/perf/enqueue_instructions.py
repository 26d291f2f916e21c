"""Instructions per enqueue call, counted by callgrind, which load does not disturb
(docs/perf-notes/per-tensor-cost.md, "The core's enqueue, counted in instructions" and "The
whole call per adapter"). A benchmark, not a test. Two modes:

1. One rank enqueuing N float32 1 KiB allreduces through runrun.torch (100 at a time, each
   waited), to read functions' inclusive counts with callgrind_annotate:

    valgrind --tool=callgrind --callgrind-out-file=cg.out \\
        "$(python3 -c 'import sys; print(sys.executable)')" tests/perf/enqueue_instructions.py 1000
    callgrind_annotate --inclusive=yes cg.out | grep -E "fast_allreduce|runrun_allreduce"

2. Per adapter, the calling thread's instructions per call of what per_tensor_cost.py times
   (one process, no launcher; needs valgrind, its callgrind.h and a C compiler):

    python3 tests/perf/enqueue_instructions.py --adapters numpy,torch,tensorflow,jax [--blocks 10]

   Each side enqueues 100 float32 1 KiB tensors under fixed names (torch:
   hvd.allreduce_async_; numpy: runrun.common.collectives.allreduce in place; TensorFlow and
   JAX: common.allreduce out of place), 3 untimed blocks, then --blocks blocks with callgrind
   collecting only while the 100 are enqueued (waiting and freeing are outside), minus an empty
   block's count. The script runs itself under valgrind (--separate-threads: the background
   thread's work is not counted) and prints instructions per call; the raw dumps stay in a
   temporary folder it names.

3. The background thread's instructions per tensor (negotiation, fusion, completion, freeing):

    python3 tests/perf/enqueue_instructions.py --background [--blocks 10]

   Runs mode 1 under callgrind (--separate-threads) twice, with --blocks and 3 x --blocks
   blocks of 100, and reads the thread running ProcessSetWorker::loop. Steady state is the
   difference over the extra blocks (every tensor a response-cache hit); the first block's
   figure (the coordinator's round for 100 new names, plus the thread's start) is what the
   shorter run has beyond its steady blocks.
"""
import os
import subprocess
import sys
import tempfile

MARKERS_C = r"""
#include <valgrind/callgrind.h>
void cg_start(void) { CALLGRIND_START_INSTRUMENTATION; }
void cg_toggle(void) { CALLGRIND_TOGGLE_COLLECT; }
void cg_zero(void) { CALLGRIND_ZERO_STATS; }
void cg_dump(const char* s) { CALLGRIND_DUMP_STATS_AT(s); }
"""


def torch_loop(n):
    import torch

    import runrun.torch as hvd
    hvd.init()
    ts = [torch.ones(256) for _ in range(100)]
    for _ in range(n // 100):
        hs = [hvd.allreduce_async_(t, name=f"per_tensor_cost.{i}", op=hvd.Sum)
              for i, t in enumerate(ts)]
        for h in hs:
            hvd.synchronize(h)
    hvd.shutdown()


def sides(adapters):
    """(label, enqueue() -> handles, wait(handles)) per side, the empty block first."""
    import numpy as np

    from runrun.common import collectives as common
    from runrun.common.numpy_tensors import ADAPTER as NUMPY
    from runrun.common.ops import Sum

    names = [f"per_tensor_cost.{i}" for i in range(100)]

    def wait_all(handles):
        for h in handles:
            h.wait()

    out = [("empty", lambda: [None for _ in names], lambda _: None)]
    for adapter in adapters:
        if adapter == "numpy":
            xs = [np.ones(256, np.float32) for _ in range(100)]
            out.append(("numpy", lambda xs=xs: [
                common.allreduce(NUMPY, x, name=n, op=Sum, in_place=True)
                for x, n in zip(xs, names)], wait_all))
        elif adapter == "torch":
            import torch

            import runrun.torch as hvd
            ts = [torch.ones(256) for _ in range(100)]
            out.append(("torch", lambda: [hvd.allreduce_async_(t, name=n, op=hvd.Sum)
                                          for t, n in zip(ts, names)], wait_all))
        elif adapter in ("tensorflow", "jax"):
            if adapter == "tensorflow":
                import tensorflow as tf

                from runrun.tensorflow.tensor_bridge import ADAPTER
                xs = [tf.ones([256], tf.float32) for _ in range(100)]
            else:
                import jax.numpy as jnp

                from runrun.jax.tensor_bridge import ADAPTER
                xs = [jnp.ones([256], jnp.float32) for _ in range(100)]
            out.append((adapter, lambda xs=xs, a=ADAPTER: [
                common.allreduce(a, x, name=n, op=Sum) for x, n in zip(xs, names)], wait_all))
        else:
            raise SystemExit(f"enqueue_instructions: unknown adapter {adapter!r}")
    return out


def inner(markers, adapters, blocks):
    import ctypes

    import runrun.common.basics as basics

    cg = ctypes.CDLL(markers)
    cg.cg_dump.argtypes = [ctypes.c_char_p]
    basics.init()

    def measure(label, enqueue, wait):
        for _ in range(3):
            wait(enqueue())
        cg.cg_zero()
        for _ in range(blocks):
            cg.cg_toggle()
            handles = enqueue()
            cg.cg_toggle()
            wait(handles)
            del handles
        cg.cg_dump(label.encode())

    all_sides = sides(adapters)
    cg.cg_start()
    for side in all_sides:
        measure(*side)
    basics.shutdown()


def outer(adapters, blocks):
    work = tempfile.mkdtemp(prefix="enqueue_instructions.")
    markers = os.path.join(work, "markers.so")
    source = os.path.join(work, "markers.c")
    with open(source, "w") as f:
        f.write(MARKERS_C)
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", markers, source], check=True)
    cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--collect-atstart=no",
           "--separate-threads=yes", f"--callgrind-out-file={work}/cg.out.%p", sys.executable,
           os.path.abspath(__file__), "--inner", markers, ",".join(adapters), str(blocks)]
    with open(os.path.join(work, "valgrind.log"), "w") as log:
        subprocess.run(cmd, check=True, stdout=log, stderr=subprocess.STDOUT)
    totals = {}
    for name in os.listdir(work):
        if not name.endswith("-01") or name.count(".") < 3:  # dumps: cg.out.<pid>.<n>-01
            continue
        label = total = None
        with open(os.path.join(work, name)) as f:
            for line in f:
                if line.startswith("desc: Trigger: Client Request: "):
                    label = line.split(": ", 3)[-1].strip()
                elif line.startswith("totals:"):
                    total = int(line.split()[1])
        if label is not None and total is not None:
            totals[label] = total
    empty = totals.pop("empty", 0)
    print(f"instructions per call (calling thread, callgrind), {blocks} x 100 calls; dumps in "
          f"{work}")
    for label in adapters:
        if label in totals:
            print(f"{label:12s} {(totals[label] - empty) / (blocks * 100):9.0f}")


def background_total(blocks, work):
    """The background thread's instructions over a run of `blocks` x 100 torch allreduces."""
    prefix = os.path.join(work, f"bg{blocks}.out")
    cmd = ["valgrind", "--tool=callgrind", "--separate-threads=yes",
           f"--callgrind-out-file={prefix}", sys.executable, os.path.abspath(__file__),
           str(blocks * 100)]
    env = dict(os.environ, RUNRUN_PEER_TIMEOUT="0")  # valgrind is ~50x slower than native
    with open(prefix + ".log", "w") as log:
        subprocess.run(cmd, check=True, stdout=log, stderr=subprocess.STDOUT, env=env)
    for name in sorted(os.listdir(work)):
        if not name.startswith(f"bg{blocks}.out-"):
            continue
        with open(os.path.join(work, name)) as f:
            text = f.read()
        if "ProcessSetWorker::loop" in text:
            return int(text.split("\ntotals:", 1)[1].split()[0])
    raise SystemExit(f"enqueue_instructions: no background thread in the dumps in {work}")


def background(blocks):
    work = tempfile.mkdtemp(prefix="background_instructions.")
    short, long = background_total(blocks, work), background_total(3 * blocks, work)
    steady = (long - short) / (2 * blocks * 100)
    first = (short - (blocks - 1) * 100 * steady) / 100
    print(f"background thread instructions per tensor (callgrind), torch allreduce of 1 KiB, "
          f"100 per block; dumps in {work}")
    print(f"steady state (response-cache hits) {steady:9.0f}")
    print(f"first block (coordinator round and thread start) {first:9.0f}")


def main():
    args = sys.argv[1:]
    if args and args[0] == "--background":
        background(int(args[args.index("--blocks") + 1]) if "--blocks" in args else 10)
    elif args and args[0] == "--inner":
        inner(args[1], args[2].split(","), int(args[3]))
    elif args and args[0] == "--adapters":
        blocks = int(args[args.index("--blocks") + 1]) if "--blocks" in args else 10
        outer([a for a in args[1].split(",") if a], blocks)
    else:
        torch_loop(int(args[0]) if args else 2000)


if __name__ == "__main__":
    main()

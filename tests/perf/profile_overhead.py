"""What `runrun --profile` costs a training step (docs/perf-notes/profile-cost.md).

Two measurements:
1. The hooks alone, in this process (no job needed): the calls a DistributedOptimizer step
   makes with profiling on (gradient_ready per gradient, wait_begin, wait_end, step_end), timed
   over many steps: the fixed cost per step and per gradient.
2. A/B under the launcher (`runrun --gloo -np 2 python3 tests/perf/profile_overhead.py --job`):
   one DistributedOptimizer training loop, blocks of steps alternating with the profiler
   attached and detached (the same process, model and data), median step time of each.
   --job --double-buffering: the same with DistributedOptimizer(double_buffering=True).
3. The same A/B for the other adapters, whose hooks run inside the compiled step: --jax (an
   optax DistributedOptimizer in a jitted step: two jitted copies, one traced with the profiler
   on, so with its native step-end mark and the allreduce's native marks) and --keras
   (model.train_on_batch on the backend
   KERAS_BACKEND names: two identical models, one compiled and traced with the profiler on).
4. --markers (no job; one rank): what the compiled-step markers themselves cost, in this
   process, a step that does little else than a grouped allreduce (JAX) or a variable update
   (TensorFlow), as the difference of the best block medians with and without them, and the
   process CPU time: JAX's native markers (the allreduce's clock reads and the
   runrun_profile_mark custom call, profile_marks.py) and, side by side as the reference they
   replaced, the same step ended by one ordered io_callback (the io_callback path's step end);
   Keras on TensorFlow's step-end graph ops (runrun/keras/_tf_marks.py) and, as reference, the
   tf.py_function step end they replaced. --tf-threads 1: TensorFlow on one thread (its CPU
   time then counts the ops' work, not its idle threads' spinning). --repeat N: the native
   step-end mark N times per step (N ring entries; the profiler's records are then wrong, the
   cost is what is measured), reported per mark: above the noise of a loaded machine.

Prints one JSON line per measurement (rank 0). A benchmark, not a test: nothing is asserted.
"""

import argparse
import json
import statistics
import time


def hooks_only(gradients, steps=20000):
    from runrun.common.profile import StepProfiler
    profiler = StepProfiler(interval=0)
    start = time.perf_counter()
    for _ in range(steps):
        for _ in range(gradients):
            profiler.gradient_ready(4096)
        profiler.wait_begin()
        profiler.wait_end()
        profiler.step_end()
    per_step = (time.perf_counter() - start) / steps
    return {"case": "hooks_only", "gradients": gradients, "us_per_step": per_step * 1e6}


def _ab(step_off, step_on, steps_per_block, rounds):
    """Median seconds per step of each, blocks alternating (the same blocks on every rank)."""
    times = {False: [], True: []}
    for _ in range(5):
        step_off()
        step_on()  # warm up (traces and compiles)
    for _ in range(rounds):
        for on, step in ((False, step_off), (True, step_on)):
            for _ in range(steps_per_block):
                start = time.perf_counter()
                step()
                times[on].append(time.perf_counter() - start)
    return statistics.median(times[False]), statistics.median(times[True]), len(times[True])


def _report(case, rank, size, off, on, steps, **extra):
    if rank == 0:
        print(json.dumps(dict({"case": case, "ranks": size, "steps": steps, "off_ms": off * 1e3,
                               "on_ms": on * 1e3, "cost_percent": (on - off) / off * 100},
                              **extra)), flush=True)


def _install(profiler):
    """Makes `profiler` the process's (None: profiling off) for what is traced next."""
    from runrun.common import profile
    profile._profiler, profile._checked = profiler, True


def _best_difference(plain, marked, blocks=15, per_block=200):
    """(µs per call of plain, µs more per call of marked): the lowest block medians; and the
    process CPU µs more per call of marked (all blocks; less sensitive to a loaded machine)."""
    cpu = {plain: 0.0, marked: 0.0}

    def block(function):
        times = []
        cpu_start = time.process_time()
        for _ in range(per_block):
            start = time.perf_counter()
            function()
            times.append(time.perf_counter() - start)
        cpu[function] += time.process_time() - cpu_start
        return statistics.median(times)
    best = {plain: float("inf"), marked: float("inf")}
    for _ in range(blocks):
        for function in (plain, marked):
            best[function] = min(best[function], block(function))
    _best_difference.cpu_us = (cpu[marked] - cpu[plain]) / (blocks * per_block) * 1e6
    return best[plain] * 1e6, (best[marked] - best[plain]) * 1e6


def markers_only(tf_threads=0, repeat=1):
    _markers_jax(repeat)
    _markers_tensorflow(tf_threads, repeat)


def _markers_jax(repeat):
    """JAX's native markers and, as reference, the io_callback step end (one rank)."""
    import jax
    import jax.numpy as jnp

    import runrun.jax as hvd
    from runrun.common.profile import StepProfiler
    from runrun.jax import profile_marks

    hvd.init()  # one rank: the grouped allreduce is a real op (native or callback path)
    grads = [jnp.ones((32, 32)) for _ in range(8)]  # a short step: the markers dominate

    def make(io_callback_end=False):
        profiler = profile_marks.profile.active()

        @jax.jit
        def step(gs):
            reduced = profile_marks.reduce([g * 2 for g in gs], hvd.grouped_allreduce)
            updated = [g - 0.1 * r for g, r in zip(gs, reduced)]
            if io_callback_end:  # the step end before it became native: one io_callback
                profile_marks._mark(updated, profiler.step_end)
            else:
                for _ in range(repeat):
                    profile_marks.step_end(updated)
            return updated
        return lambda: jax.block_until_ready(step(grads))

    _install(None)
    plain = make()
    plain()  # jax.jit traces at the first call: while the profiler is (not) installed
    _install(StepProfiler(interval=0))
    marked = make()
    marked()
    base, extra = _best_difference(plain, marked)
    print(json.dumps({"case": "markers_jax", "arrays": len(grads), "step_us": base,
                      "markers_us_per_step": extra, "repeat": repeat,
                      "markers_cpu_us_per_step": _best_difference.cpu_us}), flush=True)
    _install(StepProfiler(interval=0))
    callback = make(io_callback_end=True)
    callback()
    base, extra = _best_difference(plain, callback)
    print(json.dumps({"case": "markers_jax_io_callback_step_end (reference)", "step_us": base,
                      "markers_us_per_step": extra,
                      "markers_cpu_us_per_step": _best_difference.cpu_us}), flush=True)


def _markers_tensorflow(tf_threads, repeat):
    """Keras on TensorFlow's step-end graph ops and, as reference, the tf.py_function end."""
    import tensorflow as tf
    if tf_threads:
        tf.config.threading.set_inter_op_parallelism_threads(tf_threads)
        tf.config.threading.set_intra_op_parallelism_threads(tf_threads)
    import keras

    from runrun.common.profile import StepProfiler
    from runrun.keras._backend_ops import _TFOps
    variables = [keras.Variable(tf.ones((256, 256))) for _ in range(8)]

    def py_function_end(hooks, values):  # the step end before it became graph ops
        heads = tf.concat([tf.zeros([0])] + [tf.cast(tf.reshape(v.value, [-1])[:1], tf.float32)
                                             for v in values], 0)
        tf.py_function(lambda _heads: hooks.step_end(), [heads], [])

    def make_tf(hooks, end=_TFOps.step_end):
        @tf.function
        def step():
            for v in variables:
                v.assign(v.value * 0.5 + 1.0)
            if hooks is not None:
                for _ in range(repeat if end is _TFOps.step_end else 1):
                    end(hooks, variables)
        return step

    def traced(step):
        step()  # traced now: the tracing's CPU time would count in the first block
        return step

    plain = traced(make_tf(None))
    base, extra = _best_difference(plain, traced(make_tf(StepProfiler(interval=0))))
    print(json.dumps({"case": "marker_tensorflow", "variables": len(variables), "step_us": base,
                      "tf_threads": tf_threads or "default", "markers_us_per_step": extra,
                      "repeat": repeat,
                      "markers_cpu_us_per_step": _best_difference.cpu_us}), flush=True)
    base, extra = _best_difference(plain, traced(make_tf(StepProfiler(interval=0),
                                                         py_function_end)))
    print(json.dumps({"case": "marker_tensorflow_py_function (reference)", "step_us": base,
                      "tf_threads": tf_threads or "default", "markers_us_per_step": extra,
                      "markers_cpu_us_per_step": _best_difference.cpu_us}), flush=True)


def jax_job(steps_per_block, rounds, width, layers):
    import jax
    import jax.numpy as jnp
    import optax

    import runrun.jax as hvd
    from runrun.common.profile import StepProfiler
    hvd.init()
    keys = jax.random.split(jax.random.PRNGKey(0), layers)
    params = [jax.random.normal(k, (width, width)) / width ** 0.5 for k in keys]
    tx = hvd.DistributedOptimizer(optax.sgd(1e-3))
    data = jnp.ones((64, width))

    def loss(ps):
        x = data
        for w in ps:
            x = jax.nn.relu(x @ w)
        return jnp.mean(x ** 2)

    def make():
        @jax.jit
        def step(ps, state):
            updates, state = tx.update(jax.grad(loss)(ps), state, ps)
            return optax.apply_updates(ps, updates), state
        return step

    holder = {"params": params, "state": tx.init(params)}
    _install(None)
    off = make()
    off(holder["params"], holder["state"])  # jax.jit traces at the first call: trace it now
    _install(StepProfiler(interval=0))
    on = make()
    on(holder["params"], holder["state"])

    def run(step):
        def go():
            holder["params"], holder["state"] = step(holder["params"], holder["state"])
            jax.block_until_ready(holder["params"])
        return go

    result = _ab(run(off), run(on), steps_per_block, rounds)
    _report("jax", hvd.rank(), hvd.size(), *result, gradients=layers)
    hvd.shutdown()


def keras_job(steps_per_block, rounds, width, layers):
    import keras
    import numpy as np

    import runrun.keras as hvd
    from runrun.common.profile import StepProfiler
    hvd.init()

    def model():
        keras.utils.set_random_seed(0)
        m = keras.Sequential([keras.Input(shape=(width,))] +
                             [keras.layers.Dense(width, activation="relu") for _ in range(layers)])
        m.compile(optimizer=hvd.DistributedOptimizer(keras.optimizers.SGD(1e-3)), loss="mse",
                  jit_compile=False)
        return m

    x = np.ones((64, width), np.float32)
    _install(None)
    off = model()
    off.train_on_batch(x, x)  # traced now, profiling off
    _install(StepProfiler(interval=0))
    on = model()
    on.train_on_batch(x, x)
    profiler = StepProfiler(interval=0)

    def run(m, installed):
        def go():
            _install(installed)  # eager backends (torch) look it up every step
            m.train_on_batch(x, x)
        return go

    result = _ab(run(off, None), run(on, profiler), steps_per_block, rounds)
    _report(f"keras-{keras.backend.backend()}", hvd.rank(), hvd.size(), *result,
            gradients=2 * layers)
    hvd.shutdown()


def job(steps_per_block, rounds, width, layers, double_buffering=False):
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
                                         named_parameters=model.named_parameters(),
                                         double_buffering=double_buffering)
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
        print(json.dumps({"case": "job-double-buffering" if double_buffering else "job",
                          "ranks": hvd.size(), "gradients": 2 * layers,
                          "steps": len(times[True]), "off_ms": off * 1e3, "on_ms": on * 1e3,
                          "cost_percent": (on - off) / off * 100}), flush=True)
    hvd.shutdown()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--job", action="store_true", help="the A/B under the launcher")
    parser.add_argument("--double-buffering", action="store_true")
    parser.add_argument("--jax", action="store_true", help="the A/B of runrun.jax (optax)")
    parser.add_argument("--keras", action="store_true", help="the A/B of runrun.keras")
    parser.add_argument("--markers", action="store_true", help="the markers alone (no job)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="--markers: native step-end marks per step (cost per mark = /N)")
    parser.add_argument("--tf-threads", type=int, default=0,
                        help="--markers: TensorFlow's inter- and intra-op threads (0: default)")
    parser.add_argument("--steps-per-block", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--layers", type=int, default=8)
    args = parser.parse_args()
    sizes = (args.steps_per_block, args.rounds, args.width, args.layers)
    if args.markers:
        markers_only(args.tf_threads, args.repeat)
    elif args.jax:
        jax_job(*sizes)
    elif args.keras:
        keras_job(*sizes)
    elif args.job:
        job(*sizes, args.double_buffering)
    else:
        for gradients in (16, 161):
            print(json.dumps(hooks_only(gradients)), flush=True)


if __name__ == "__main__":
    main()

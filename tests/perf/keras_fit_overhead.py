"""Keras 3 model.fit step time with runrun at N ranks vs the same model on one process, in the
same job (issue 12, point 6). A benchmark, never a test: it asserts nothing about time.

Usage (from the repository root, runrun's package importable; KERAS_BACKEND picks the backend):
    runrun --gloo -np 2 -H localhost:2 python3 tests/perf/keras_fit_overhead.py [--json]

An MLP (--width, --layers; float32) trained with SGD on synthetic data, --batch rows per rank
and step. Blocks alternate between two sides (rotating which goes first):
- one process: rank 0 alone fits a plain copy of the model (no runrun in the step) while the
  other ranks wait in a barrier, so it has the machine to itself;
- runrun: every rank fits the model with runrun.keras.DistributedOptimizer (one grouped
  allreduce of all gradients per step, inside the compiled train step).
Each side's first fit (tracing, compiling) is not timed. Per block: the wall time of one epoch
of --steps steps (epoch begin to end), / steps, the slowest rank's for the runrun side.
Reported: median and minimum over --blocks per side, and the overhead (runrun - one process).
--micro also times a synchronous allreduce of 1 KiB, one after the other: a numpy array through
runrun.common (the runtime's round trip), runrun.tensorflow.allreduce eagerly and inside
tf.function (the py_function round trip), on the TensorFlow backend.
"""

import argparse
import json
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402

import runrun.keras as hvd  # noqa: E402


class EpochTimer(keras.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        self.start = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        self.seconds = time.perf_counter() - self.start


def make_model(args, distributed):
    keras.utils.set_random_seed(1)
    layers = [keras.Input(shape=(args.width,))]
    layers += [keras.layers.Dense(args.width, activation="relu") for _ in range(args.layers)]
    model = keras.Sequential(layers + [keras.layers.Dense(1)])
    opt = keras.optimizers.SGD(learning_rate=1e-3)
    model.compile(optimizer=hvd.DistributedOptimizer(opt) if distributed else opt, loss="mse")
    return model


def step_ms(model, x, y, args):
    timer = EpochTimer()
    model.fit(x, y, batch_size=args.batch, epochs=1, shuffle=False, verbose=0,
              callbacks=[timer])
    return timer.seconds / args.steps * 1e3


def slowest(value):
    return float(np.max(keras.ops.convert_to_numpy(hvd.allgather(np.array([value])))))


def micro(report):
    import tensorflow as tf

    import runrun.tensorflow as rtf
    from runrun.common import collectives
    from runrun.common.numpy_tensors import ADAPTER

    x = tf.ones([256], tf.float32)
    array = np.ones(256, np.float32)
    in_function = tf.function(lambda t: rtf.allreduce(t, op=rtf.Sum, name="micro.fn"))
    in_function(x)
    for label, call in (
            ("numpy (runrun.common)",
             lambda: collectives.allreduce(ADAPTER, array, op=rtf.Sum, name="micro.np").wait()),
            ("eager", lambda: rtf.allreduce(x, op=rtf.Sum, name="micro.eager")),
            ("tf.function", lambda: in_function(x))):
        times = []
        for _ in range(5):
            hvd.allreduce(np.zeros(1, np.float32), name="micro.barrier")
            start = time.perf_counter()
            for _ in range(200):
                call()
            times.append((time.perf_counter() - start) / 200 * 1e6)
        report(f"allreduce 1 KiB {label}", "us_per_call", times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--blocks", type=int, default=5)
    parser.add_argument("--micro", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    hvd.init()
    rank, size = hvd.rank(), hvd.size()
    rng = np.random.default_rng(rank)
    x = rng.normal(size=(args.batch * args.steps, args.width)).astype("float32")
    y = rng.normal(size=(args.batch * args.steps, 1)).astype("float32")
    plain = make_model(args, False) if rank == 0 else None
    dist = make_model(args, True)
    if rank == 0:
        step_ms(plain, x, y, args)  # trace and compile, untimed
    step_ms(dist, x, y, args)
    sides = {"one process": [], f"runrun {size} ranks": []}
    for block in range(args.blocks):
        for side in (sorted(sides) if block % 2 else sorted(sides, reverse=True)):
            hvd.allreduce(np.zeros(1, np.float32), name="block.barrier")
            if side == "one process":
                value = step_ms(plain, x, y, args) if rank == 0 else 0.0
                value = slowest(value)
            else:
                value = slowest(step_ms(dist, x, y, args))
            sides[side].append(value)

    params = dist.count_params()

    def report(label, unit, values):
        if rank != 0:
            return
        line = {"backend": keras.backend.backend(), "ranks": size, "side": label,
                "unit": unit, "median": statistics.median(values), "min": min(values),
                "params": params, "batch_per_rank": args.batch}
        print(json.dumps(line) if args.json else
              f"{line['backend']:10s} {label:34s} median {line['median']:8.2f} {unit} "
              f"(min {line['min']:.2f}); {params} float32 parameters, batch {args.batch}/rank")

    for label, values in sides.items():
        report(label, "ms_per_step", values)
    one, many = sides["one process"], sides[f"runrun {size} ranks"]
    report("overhead", "ms_per_step", [m - o for m, o in zip(many, one)])
    if args.micro and keras.backend.backend() == "tensorflow":
        micro(report)
    hvd.shutdown()


if __name__ == "__main__":
    main()

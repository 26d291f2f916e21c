"""A Horovod-style Keras 3 script, unchanged but for its import line: synthetic data,
DistributedOptimizer, BroadcastGlobalVariablesCallback(0), checkpoints on rank 0 only,
steps_per_epoch = N // size. Runs on every Keras backend (KERAS_BACKEND=tensorflow|jax|torch).

    runrun -np 2 -H localhost:2 python examples/keras/keras_synthetic.py
"""

import argparse
import os
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402

import runrun.keras as hvd  # was: import horovod.tensorflow.keras as hvd  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--samples", type=int, default=512)
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--checkpoint-dir", default=None,
                    help="where rank 0 writes its checkpoints (default: a temporary folder "
                    "removed at the end)")
args = parser.parse_args()

hvd.init()

rng = np.random.default_rng(1234)
x = rng.normal(size=(args.samples, 20)).astype("float32")
y = (x @ rng.normal(size=(20, 1)) > 0).astype("float32")
x, y = x[hvd.rank()::hvd.size()], y[hvd.rank()::hvd.size()]  # this rank's shard

model = keras.Sequential([
    keras.Input(shape=(20,)),
    keras.layers.Dense(32, activation="relu"),
    keras.layers.Dense(1, activation="sigmoid"),
])
# Horovod: scale the learning rate by the number of workers, wrap the optimizer.
opt = keras.optimizers.SGD(learning_rate=0.05 * hvd.size(), momentum=0.9)
opt = hvd.DistributedOptimizer(opt)
model.compile(optimizer=opt, loss="binary_crossentropy", metrics=["accuracy"])

callbacks = [
    hvd.callbacks.BroadcastGlobalVariablesCallback(0),
    hvd.callbacks.MetricAverageCallback(),
    hvd.callbacks.LearningRateWarmupCallback(initial_lr=0.05 * hvd.size(), warmup_epochs=1,
                                             verbose=1),
]
scratch = None
if hvd.rank() == 0:  # checkpoints only on rank 0
    if args.checkpoint_dir is None:
        scratch = tempfile.TemporaryDirectory(prefix="runrun_keras_example_")
    callbacks.append(keras.callbacks.ModelCheckpoint(
        os.path.join(args.checkpoint_dir or scratch.name, "checkpoint-{epoch}.keras")))

history = model.fit(x, y, batch_size=args.batch_size,
                    steps_per_epoch=args.samples // args.batch_size // hvd.size(),
                    epochs=args.epochs, callbacks=callbacks,
                    verbose=2 if hvd.rank() == 0 else 0)

# Every rank must end with the same weights.
first = np.concatenate([w.reshape(-1) for w in model.get_weights()])
weights = keras.ops.convert_to_numpy(hvd.broadcast(first, 0))
assert np.array_equal(weights, first), f"rank {hvd.rank()}: weights differ from rank 0's"
if hvd.rank() == 0:
    print(f"keras_synthetic: backend {keras.backend.backend()}, {hvd.size()} ranks, "
          f"final loss {history.history['loss'][-1]:.4f}, weights identical on every rank")
if scratch is not None:
    scratch.cleanup()
hvd.shutdown()

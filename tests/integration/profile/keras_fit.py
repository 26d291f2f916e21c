"""A small Keras model.fit for the --profile tests (profile_frameworks.sh), unchanged by
profiling: runrun.keras.DistributedOptimizer on the backend KERAS_BACKEND names, --steps steps
of one epoch. Prints the gradients' bytes (what each step's record must report)."""

import argparse

import keras
import numpy as np

import runrun.keras as hvd


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=12)
    args = parser.parse_args()
    hvd.init()
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input(shape=(32,)), keras.layers.Dense(64, activation="relu"),
                              keras.layers.Dense(1)])
    model.compile(optimizer=hvd.DistributedOptimizer(keras.optimizers.SGD(0.01)), loss="mse",
                  jit_compile=False)
    batch = 16
    x = np.random.default_rng(hvd.rank()).normal(size=(batch * args.steps, 32)).astype("float32")
    model.fit(x, x[:, :1], batch_size=batch, epochs=1, verbose=0,
              callbacks=[hvd.callbacks.BroadcastGlobalVariablesCallback(0)])
    grad_bytes = sum(int(np.prod(w.shape)) * 4 for w in model.trainable_weights)
    print(f"TRAINED rank={hvd.rank()} grad_bytes={grad_bytes}", flush=True)
    hvd.shutdown()


if __name__ == "__main__":
    main()

"""A small JAX/optax training loop for the --profile tests (profile_frameworks.sh), unchanged by
profiling: runrun.jax.DistributedOptimizer inside a jitted step (--eager: not jitted), --steps
steps. Prints the gradients' bytes (what each step's record must report)."""

import argparse

import jax
import jax.numpy as jnp
import numpy as np
import optax

import runrun.jax as hvd


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--eager", action="store_true")
    args = parser.parse_args()
    hvd.init()
    params = {"w": jnp.ones((64, 32)), "b": jnp.zeros((32,))}
    tx = hvd.DistributedOptimizer(optax.sgd(0.01))
    state = tx.init(params)
    x = jnp.asarray(np.random.default_rng(hvd.rank()).normal(size=(16, 64)), jnp.float32)

    def step(p, s):
        grads = jax.grad(lambda q: jnp.mean((x @ q["w"] + q["b"]) ** 2))(p)
        updates, s = tx.update(grads, s, p)
        return optax.apply_updates(p, updates), s

    if not args.eager:
        step = jax.jit(step)
    for _ in range(args.steps):
        params, state = step(params, state)
    jax.block_until_ready(params)
    grad_bytes = sum(leaf.size * leaf.dtype.itemsize for leaf in jax.tree_util.tree_leaves(params))
    print(f"TRAINED rank={hvd.rank()} grad_bytes={grad_bytes}", flush=True)
    hvd.shutdown()


if __name__ == "__main__":
    main()

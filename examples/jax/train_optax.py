"""Data-parallel training with JAX and optax under runrun, the Horovod way:

    runrun -np 2 -H localhost:2 python examples/jax/train_optax.py

Each step every rank draws the same synthetic global batch (size() x --batch rows), keeps its
own --batch rows, computes gradients inside one jitted step, and
runrun.jax.DistributedOptimizer averages them across ranks (one grouped allreduce inside the
jitted step) before optax's Adam applies them. Averaged shard gradients are the gradient of
the global batch's mean loss, so the loss matches one process training on the global batch;
--check trains that single-process reference on every rank too and fails when they differ.
Parameters start from rank 0's (broadcast_parameters), whatever each rank's seed gave.
"""

import argparse

import jax
import jax.numpy as jnp
import numpy as np
import optax

import runrun.jax as hvd

IN, HIDDEN, OUT = 8, 16, 3


def init_params(seed):
    """numpy's generator: jax.random's first use compiles for seconds on a small CPU."""
    rng = np.random.default_rng(seed)
    normal = lambda *shape: jnp.asarray(0.3 * rng.standard_normal(shape), jnp.float32)  # noqa
    return {"dense1": {"w": normal(IN, HIDDEN), "b": jnp.zeros(HIDDEN)},
            "dense2": {"w": normal(HIDDEN, OUT), "b": jnp.zeros(OUT)}}


def loss_fn(params, x, y):
    h = jnp.tanh(x @ params["dense1"]["w"] + params["dense1"]["b"])
    return jnp.mean((h @ params["dense2"]["w"] + params["dense2"]["b"] - y) ** 2)


def global_batch(step, rows):
    """The same batch on every rank (numpy: no PRNG state shared with JAX)."""
    rng = np.random.default_rng(10_000 + step)
    x = rng.standard_normal((rows, IN)).astype(np.float32)
    y = np.sin(x[:, :OUT]) + 0.1 * rng.standard_normal((rows, OUT)).astype(np.float32)
    return jnp.asarray(x), jnp.asarray(y)


def make_step(tx, distributed):
    @jax.jit
    def step(params, opt_state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, opt_state = tx.update(grads, opt_state, params)
        if distributed:  # the global batch's loss: the mean of the ranks' shard losses
            loss = hvd.allreduce(loss, op=hvd.Average, name="train.loss")
        return optax.apply_updates(params, updates), opt_state, loss
    return step


def train(steps, batch, lr, distributed=True):
    """Losses per step and the final parameters; distributed=False: this process alone on the
    global batch of size() x batch rows (the reference)."""
    world = hvd.size()
    if distributed:
        params = hvd.broadcast_parameters(init_params(seed=hvd.rank()), root_rank=0)
        tx = hvd.DistributedOptimizer(optax.adam(lr))
        rows = slice(hvd.rank() * batch, (hvd.rank() + 1) * batch)
    else:
        params, tx, rows = init_params(seed=0), optax.adam(lr), slice(None)
    opt_state = tx.init(params)
    step_fn = make_step(tx, distributed)
    losses = []
    for step in range(steps):
        x, y = global_batch(step, world * batch)
        params, opt_state, loss = step_fn(params, opt_state, x[rows], y[rows])
        losses.append(float(loss))
    return losses, params


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=16, help="rows per rank and step")
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--check", action="store_true",
                        help="also train one process on the global batch; fail on a mismatch")
    args = parser.parse_args()
    hvd.init()
    losses, params = train(args.steps, args.batch, args.lr)
    if hvd.rank() == 0:
        for step, loss in enumerate(losses):
            print(f"step {step}: loss {loss:.6f} (global batch {hvd.size() * args.batch})")
    if args.check:
        ref_losses, ref_params = train(args.steps, args.batch, args.lr, distributed=False)
        ok = np.allclose(losses, ref_losses, rtol=1e-5, atol=1e-6) and all(
            np.allclose(a, b, rtol=1e-5, atol=1e-6) for a, b in
            zip(jax.tree_util.tree_leaves(params), jax.tree_util.tree_leaves(ref_params)))
        print(f"rank {hvd.rank()}: {'matches' if ok else 'DIFFERS FROM'} the single-process "
              f"run on the global batch (last loss {losses[-1]:.6f} vs {ref_losses[-1]:.6f})")
        if not ok:
            raise SystemExit(1)
    hvd.shutdown()


if __name__ == "__main__":
    main()

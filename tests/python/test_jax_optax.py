"""runrun.jax training (issue 12, points 3 and 5): examples/jax/train_optax.py's data-parallel
training (DistributedOptimizer inside the jitted step) against a single process training on
the concatenated global batch, as test_optimizer.py does for torch; allreduce_gradients and
broadcast_parameters / broadcast_optimizer_state on pytrees."""

import importlib.util
import os

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

_EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "jax",
                        "train_optax.py")


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("train_optax", _EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def same_tree(a, b, **tol):
    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    assert jax.tree_util.tree_structure(a) == jax.tree_util.tree_structure(b)
    for x, y in zip(la, lb):
        assert np.allclose(np.asarray(x), np.asarray(y), **tol), np.abs(x - y).max()


def test_example_matches_single_process_on_global_batch(jhvd, example):
    losses, params = example.train(steps=4, batch=4, lr=0.01)
    ref_losses, ref_params = example.train(steps=4, batch=4, lr=0.01, distributed=False)
    assert np.allclose(losses, ref_losses, rtol=1e-5, atol=1e-6), (losses, ref_losses)
    same_tree(params, ref_params, rtol=1e-5, atol=1e-6)
    # ... and every rank holds the same parameters (rank 0's were broadcast first).
    for leaf in jax.tree_util.tree_leaves(params):
        gathered = jhvd.allgather(leaf[None])
        assert all(np.array_equal(g, gathered[0]) for g in gathered)


@pytest.mark.parametrize("jit", [False, True])
def test_allreduce_gradients_and_predivide(jhvd, jit):
    n, r = jhvd.size(), jhvd.rank()
    grads = {"a": jnp.full((3,), float(r)), "b": [jnp.full((2, 2), 2.0 * r), jnp.float32(r)]}
    mean = sum(range(n)) / n
    expected = {"a": np.full((3,), mean), "b": [np.full((2, 2), 2 * mean), np.float32(mean)]}
    average = jax.jit(jhvd.allreduce_gradients) if jit else jhvd.allreduce_gradients
    same_tree(average(grads), expected, rtol=0, atol=1e-6)
    predivided = lambda g: jhvd.allreduce_gradients(g, gradient_predivide_factor=2.0)  # noqa
    same_tree((jax.jit(predivided) if jit else predivided)(grads), expected, rtol=0, atol=1e-6)
    summed = jhvd.allreduce_gradients(grads, op=jhvd.Sum)
    same_tree(summed, jax.tree_util.tree_map(lambda e: e * n, expected), rtol=0, atol=1e-5)
    assert jhvd.allreduce_gradients({}) == {}


def test_distributed_optimizer_wraps_update(jhvd):
    n, r = jhvd.size(), jhvd.rank()
    tx = jhvd.DistributedOptimizer(optax.sgd(1.0))
    params = {"w": jnp.zeros(2)}
    state = tx.init(params)
    updates, _ = jax.jit(tx.update)({"w": jnp.full((2,), float(r))}, state, params)
    # sgd(1.0): update = -mean(grad)
    assert np.allclose(updates["w"], -sum(range(n)) / n)


def test_broadcast_parameters_and_optimizer_state(jhvd):
    r = jhvd.rank()
    with jax.enable_x64(True):
        tree = {"w": jnp.full((2, 3), float(r), jnp.float64), "step": jnp.int64(r),
                "lr": 0.1 * (r + 1), "flag": r == 0, "n": r, "none": None,
                "bf16": jnp.full((4,), r, jnp.bfloat16)}
        out = jhvd.broadcast_parameters(tree, root_rank=0)
        assert out["none"] is None and out["lr"] == 0.1 and out["flag"] is True
        assert out["n"] == 0 and type(out["n"]) is int
        assert out["w"].dtype == jnp.float64 and np.array_equal(out["w"], np.zeros((2, 3)))
        assert out["step"].dtype == jnp.int64 and int(out["step"]) == 0
        assert out["bf16"].dtype == jnp.bfloat16 and np.array_equal(out["bf16"], np.zeros(4))
    tx = optax.adam(0.1)
    state = tx.init({"w": jnp.full((3,), float(r))})
    state = jax.tree_util.tree_map(lambda x: x + r, state)
    out = jhvd.broadcast_optimizer_state(state, root_rank=jhvd.size() - 1)
    expected = jax.tree_util.tree_map(lambda x: x - r + jhvd.size() - 1, state)
    same_tree(out, expected, rtol=0, atol=0)
    jitted = jax.jit(lambda t: jhvd.broadcast_parameters(t, root_rank=1))(
        {"w": jnp.full((2,), float(r))})
    assert np.array_equal(jitted["w"], np.full((2,), 1.0))

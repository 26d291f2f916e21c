"""Shared helpers of the runrun.jax tests (tests/python/test_jax_*.py): each rank's
deterministic contribution, small integers so that every reduction is exact in every dtype."""

import numpy as np


def values(r, shape, dtype, seed=0, low=-8, high=8):
    """Rank r's contribution as a numpy array of `dtype` (a jax dtype is a numpy dtype)."""
    rng = np.random.default_rng(1000 * r + seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if dtype == np.uint8:
        low = max(low, 0)
    return rng.integers(low, high, shape).astype(dtype)


def everyone(size, shape, dtype, **kw):
    return [values(r, shape, dtype, **kw) for r in range(size)]

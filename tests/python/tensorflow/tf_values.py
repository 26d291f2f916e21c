"""Rank contributions for the TensorFlow suite (a module of its own: `conftest` is taken by
tests/python/conftest.py)."""

import numpy as np


def values(r, shape, dtype, seed=0, low=-8, high=8):
    """Rank r's contribution as numpy (dtype a numpy dtype, ml_dtypes' bfloat16 included):
    small integers, so every reduction is exact in every dtype."""
    rng = np.random.default_rng(1000 * r + seed)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if dtype == np.uint8:
        low = max(low, 0)
    return rng.integers(low, high, shape).astype(dtype)

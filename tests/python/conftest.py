"""Shared setup of the Python suite. Every rank runs every test; tests are collective, so they
must run in the same order on every rank and may not skip a collective on some ranks only.
The runtime starts once per session (when a test asks for `hvd`) and shuts down at the end."""

import os
import sys

import pytest
from run_rank import world_rank

# The TensorFlow and Keras suites run in processes of their own (run_framework_tests.sh):
# TensorFlow is heavy to import and KERAS_BACKEND is fixed per process.
collect_ignore = ["tensorflow", "keras"]

# Tests import the package from the build tree when `make install` has not run.
_SRC = os.path.join(os.path.dirname(__file__), "..", "..", "frameworks", "python")
if os.path.isdir(_SRC) and "runrun" not in sys.modules:
    try:
        import runrun  # noqa: F401
    except ImportError:
        sys.path.insert(0, os.path.abspath(_SRC))


# For a test that needs no peer and starts interpreters of its own: its result does not depend
# on the rank, and every rank starting the same interpreters at once on a small machine costs
# seconds per test. It runs once per job; it must not hold a collective.
on_rank_0_only = pytest.mark.skipif(
    world_rank() != 0, reason="rank-independent, in interpreters of its own: runs on rank 0")


@pytest.fixture(scope="session")
def hvd():
    import runrun.torch as hvd

    hvd.init()
    yield hvd
    hvd.shutdown()


@pytest.fixture(scope="module")
def jhvd(hvd):
    """runrun.jax on the session's runtime (the `hvd` fixture starts it; init is idempotent)."""
    import runrun.jax as jhvd

    jhvd.init()
    return jhvd


def rank_values(r, shape, dtype, seed=0, low=-8, high=8):
    """The deterministic tensor rank `r` contributes: small integers, so sums, averages of
    powers of two and products are exact in every dtype and reductions can be compared
    exactly with a local reference."""
    import torch

    gen = torch.Generator().manual_seed(1000 * r + seed)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).to(torch.bool)
    if dtype == torch.uint8:
        low = 0
    values = torch.randint(low, high, shape, generator=gen)
    return values.to(dtype)

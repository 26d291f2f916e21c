"""The Keras 3 suite (issue 12): run once per Keras backend by
tests/python/run_framework_tests.sh, with KERAS_BACKEND set in the environment before keras is
imported; every rank runs every test; the runtime starts once per session."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import pytest  # noqa: E402


@pytest.fixture(scope="session")
def hvd():
    import runrun.keras as hvd

    hvd.init()
    yield hvd
    hvd.shutdown()

"""The TensorFlow suite (issue 12): every rank runs every test, as in tests/python. Run by
tests/python/run_framework_tests.sh in its own processes (TensorFlow is heavy to import and
stays out of the torch suite's processes); the runtime starts once per session."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import pytest  # noqa: E402


@pytest.fixture(scope="session")
def hvd():
    import runrun.tensorflow as hvd

    hvd.init()
    yield hvd
    hvd.shutdown()

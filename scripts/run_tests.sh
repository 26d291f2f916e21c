#!/usr/bin/env bash
# Why: `make test`: the whole suite — Catch2 and multi-process tests through ctest, then pytest
# under the launcher (the torch suite, then the TensorFlow and Keras suites), then the Ray and
# Spark suites (tests/engines). Fails when any part fails; every part runs.
set -uo pipefail
BUILD_DIR="${1:-build}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
status=0
ctest --test-dir "$BUILD_DIR" --output-on-failure --timeout 600 || status=1
bash tests/python/run_pytest.sh "$BUILD_DIR" || status=1
bash tests/python/run_framework_tests.sh "$BUILD_DIR" || status=1  # TensorFlow, Keras 3
bash tests/engines/run_engine_tests.sh "$BUILD_DIR" || status=1  # Ray, Spark
exit $status

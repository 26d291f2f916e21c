#!/usr/bin/env bash
# Why: `make test`'s Ray and Spark suites (issue 37; docs/ray.md, docs/spark.md). The engines
# start the ranks (Ray actors, Spark barrier tasks), not runrun's launcher, so each module runs
# in one plain pytest process, on a Ray cluster or Spark context of its own that the module
# starts and stops (ray.init(num_cpus=...), two Ray nodes in network-namespace hosts (root),
# local[2], local-cluster[2,1,1024]). `timeout`
# bounds every module; the time each took is printed. Needs ray, pyspark and a Java 17
# (scripts/install_deps.sh); the `runrun` launcher of BUILD_DIR for Runner(np<0).
# Usage: tests/engines/run_engine_tests.sh [BUILD_DIR [pytest args...]]
set -uo pipefail
BUILD_DIR="$(cd "${1:-build}" && pwd)"
shift || true
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PYTHON="${PYTHON:-python3}"
PER_MODULE_TIMEOUT="${RUNRUN_ENGINE_TEST_TIMEOUT:-400}"
export PATH="$BUILD_DIR/launcher:$PATH"
# A collective stuck on a lost peer becomes an error instead of a hang.
export RUNRUN_COLLECTIVE_TIMEOUT="${RUNRUN_COLLECTIVE_TIMEOUT:-120}"
export RAY_USAGE_STATS_ENABLED=0 PYSPARK_PYTHON="$("$PYTHON" -c 'import sys; print(sys.executable)')"

status=0
total_start=$(date +%s)
for module in ray_tests/test_ray_executor.py ray_tests/test_ray_two_nodes.py \
              ray_tests/test_ray_elastic.py ray_tests/test_ray_train.py \
              spark_tests/test_spark_local.py spark_tests/test_spark_local_cluster.py; do
  start=$(date +%s)
  timeout -k 20 "$PER_MODULE_TIMEOUT" "$PYTHON" -m pytest -q -p no:cacheprovider \
    -W ignore::DeprecationWarning -W ignore::FutureWarning "$HERE/$module" "$@" || {
    echo "run_engine_tests: $module FAILED"; status=1; }
  echo "run_engine_tests: $module took $(( $(date +%s) - start )) s"
done
echo "run_engine_tests: all took $(( $(date +%s) - total_start )) s"
exit $status

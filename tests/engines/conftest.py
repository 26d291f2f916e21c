"""Shared setup of the Ray and Spark suites (tests/engines/run_engine_tests.sh runs them in one
plain pytest process each: the engines start the ranks, not runrun's launcher).

The engines' workers import this folder's helpers (training.py) and the test modules' functions
by name: PYTHONPATH carries these folders to every Ray worker and Spark executor this process
starts."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.abspath(os.path.join(HERE, "..", "..", "frameworks", "python"))
PATHS = [HERE, os.path.join(HERE, "ray_tests"), os.path.join(HERE, "spark_tests"), SRC]
for path in PATHS:
    if path not in sys.path:
        sys.path.insert(0, path)
os.environ["PYTHONPATH"] = os.pathsep.join(
    PATHS + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])

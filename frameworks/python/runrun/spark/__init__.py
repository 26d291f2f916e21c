"""runrun on Spark: Horovod's horovod.spark.run (a barrier-mode stage, one rank per task) and
Databricks' HorovodRunner (Runner). docs/spark.md.

Why: one import for the driver or notebook; pyspark is imported only when a job runs.
Thread-safety: see each function.
"""

from runrun.spark.horovod_runner import Runner
from runrun.spark.run import RankFailedError, run, run_elastic

HorovodRunner = Runner

__all__ = ["run", "run_elastic", "Runner", "HorovodRunner", "RankFailedError"]

"""runrun.spark.Runner: Databricks' HorovodRunner (sparkdl.HorovodRunner) on runrun.

Why: notebooks written for HorovodRunner(np=N).run(main, **kwargs) keep working with the import
changed. np < 0 runs -np processes on the driver (runrun.run, the runrun launcher on this host:
Databricks' local mode for debugging); np > 0 runs np barrier tasks (runrun.spark.run). Returns
rank 0's return value, as HorovodRunner does. Thread-safety: driver only.
"""

import sys


class Runner:
    def __init__(self, np, driver_log_verbosity="all"):
        if not isinstance(np, int) or np == 0:
            raise ValueError(f"runrun.spark.Runner: np={np!r}: pass np > 0 (that many Spark "
                             "tasks) or np < 0 (-np processes on the driver)")
        self.num_processor = np
        self.driver_log_verbosity = driver_log_verbosity

    def run(self, main, **kwargs):
        """main(**kwargs) on every rank; rank 0's return value."""
        if self.num_processor < 0:
            from runrun.runner import run as run_here

            return run_here(main, kwargs=kwargs, num_proc=-self.num_processor,
                            use_gloo=True)[0]
        from runrun.spark.run import run

        quiet = self.driver_log_verbosity == "log_callback_only"
        return run(main, kwargs=kwargs, num_proc=self.num_processor,
                   stdout=_Discard() if quiet else sys.stdout)[0]


class _Discard:
    def write(self, _text):
        pass

    def flush(self):
        pass

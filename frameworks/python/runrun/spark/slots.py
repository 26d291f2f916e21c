"""How many tasks a Spark cluster can run at once, and the wait for enough of them.

Why: a barrier stage needs all its tasks running together. Spark refuses one larger than the
cluster's slots only after retrying for minutes (spark.scheduler.barrier.maxConcurrentTasksCheck)
and executors of a new cluster register seconds after the context starts; runrun.spark.run waits
up to start_timeout for enough free slots and otherwise fails saying how many there were.
Thread-safety: driver only (py4j calls on the context's JVM).
"""

import time


def free_slots(sc):
    """Slots (tasks the executors can run at once) minus the tasks running now."""
    jsc = sc._jsc.sc()
    total = jsc.maxNumConcurrentTasks(jsc.resourceProfileManager().defaultResourceProfile())
    tracker = sc.statusTracker()
    running = 0
    for stage_id in tracker.getActiveStageIds():
        info = tracker.getStageInfo(stage_id)
        if info is not None:
            running += info.numActiveTasks
    return max(0, total - running), total


def wait_for_slots(sc, needed, timeout_s):
    """Returns once `needed` slots are free; TimeoutError after timeout_s saying how many were."""
    deadline = time.monotonic() + timeout_s
    while True:
        free, total = free_slots(sc)
        if free >= needed:
            return
        if time.monotonic() >= deadline:
            raise TimeoutError(
                f"runrun.spark: {needed} processes need {needed} free task slots at once (a "
                f"barrier stage), but only {free} of the cluster's {total} were free after "
                f"{timeout_s} s (start_timeout); lower num_proc or add executors")
        time.sleep(0.2)

"""One rank of runrun.spark.run, in a process of its own that the rank's Spark task started:
`python -m runrun.spark.task_process PAYLOAD RESULT`.

Why: Spark reuses its Python workers from one task to the next, and runrun's runtime (with the
job's secret, read once per process) must not outlive the job in them; a process per rank also
lets a rank's crash (even a signal) be told apart from the task. It loads the function and its
arguments (cloudpickle) from PAYLOAD, runs it, and writes ("ok", value, when) or ("error",
traceback, when) to RESULT (when: the wall-clock time the function returned or raised; the driver
names the rank that failed first). Thread-safety: a process's main thread.
"""

import sys
import time
import traceback

from runrun.common import object_codec


def main(payload_path, result_path):
    with open(payload_path, "rb") as f:
        fn, args, kwargs = object_codec.loads(f.read())
    try:
        outcome = ("ok", fn(*args, **kwargs), time.time())
    except BaseException:  # the driver reports it with the rank's traceback
        outcome = ("error", traceback.format_exc(), time.time())
    try:
        data = object_codec.dumps(outcome)
    except Exception:
        data = object_codec.dumps(("error", "the function's result cannot be pickled:\n" +
                                   traceback.format_exc(), time.time()))
    with open(result_path, "wb") as f:
        f.write(data)
    return 0 if outcome[0] == "ok" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))

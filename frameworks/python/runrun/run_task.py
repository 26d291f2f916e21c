"""The rank side of runrun.run (`python -m runrun.run_task`, started by the launcher): decodes
the function and its arguments from the environment (runrun.runner's chunks), calls it, and
prints its pickled return value as one marked line on stdout for runrun.run to collect.
An exception ends the rank with its traceback and exit status 1, which fails the job.
Thread-safety: a process of its own.
"""

import base64
import os
import sys

from runrun.common import object_codec
from runrun.runner import PAYLOAD_ENV, RESULT_MARKER


def _payload():
    count = int(os.environ.get(f"{PAYLOAD_ENV}_CHUNKS", "0"))
    if count < 1:
        raise SystemExit("runrun.run_task: no function in the environment; this module is "
                         "started by runrun.run, not by hand")
    data = "".join(os.environ.pop(f"{PAYLOAD_ENV}_{i}") for i in range(count))
    return object_codec.loads(base64.b64decode(data))


def main():
    func, args, kwargs = _payload()
    result = func(*args, **kwargs)
    rank = os.environ.get("RUNRUN_RANK", "0")
    encoded = base64.b64encode(object_codec.dumps(result)).decode()
    sys.stdout.flush()
    sys.stdout.write(f"{RESULT_MARKER}{rank} {encoded}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()

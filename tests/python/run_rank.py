"""One rank of the Python suite: runs pytest with a per-rank log and junit XML.

Why: every rank runs the same tests (they are collective); rank 0 prints to the console, the
others only to their log, and run_pytest.sh checks every rank's verdict.
Usage: python run_rank.py OUT_DIR TEST_DIR [pytest args...]
"""

import contextlib
import os
import sys


def world_rank():
    for var in ("RUNRUN_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK"):
        if var in os.environ:
            return int(os.environ[var])
    return 0


class Tee:
    def __init__(self, *streams):
        self.streams = streams

    def write(self, data):
        for s in self.streams:
            s.write(data)

    def flush(self):
        for s in self.streams:
            s.flush()

    def isatty(self):
        return False


def main():
    import pytest

    out_dir, test_dir, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
    rank = world_rank()
    args = [test_dir, "-p", "no:cacheprovider", "-q", "-rfEX",
            f"--junitxml={os.path.join(out_dir, f'rank_{rank}.xml')}", *extra]
    with open(os.path.join(out_dir, f"rank_{rank}.log"), "w") as log:
        stream = Tee(log, sys.__stdout__) if rank == 0 else log
        with contextlib.redirect_stdout(stream), contextlib.redirect_stderr(stream):
            code = pytest.main(args)
        log.write("\nRUNRUN_RANK_PASSED\n" if code == 0 else f"\nRUNRUN_RANK_FAILED {code}\n")
        log.flush()
    # A normal exit: MPI_Finalize runs from the C atexit handlers (os._exit would skip it and
    # mpirun would then kill the other ranks).
    sys.exit(int(code))


if __name__ == "__main__":
    main()

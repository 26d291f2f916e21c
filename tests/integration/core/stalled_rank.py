"""Issue 9, point 2: one rank of three sleeps for two minutes without submitting a tensor; the
other two submit an allreduce. They must raise the stall error at RUNRUN_STALL_SHUTDOWN_TIME and
then exit (no wait for the sleeper in the transport's finalization); the launcher then stops the
sleeper. Driven by bounded_exit_test.sh, which passes TOKEN on the command line so that it can
find stray processes."""
import sys
import time

import torch

import runrun.torch as hvd

hvd.init()
if hvd.rank() == 2:
    print(f"sleeper: asleep from {time.time():.3f} gloo={hvd.gloo_enabled()}", flush=True)
    time.sleep(120)
    sys.exit(0)
handle = hvd.allreduce_async(torch.ones(4), name="grad")
hvd.synchronize(handle)  # raises the stall error
print("FAIL: the allreduce completed without the sleeping rank", flush=True)

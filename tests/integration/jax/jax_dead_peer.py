"""A rank dies (SIGKILL) while the others run a jitted allreduce (runrun.jax's native XLA FFI
path by default, RUNRUN_JAX_JIT_PATH selects): each survivor's jitted call must fail with
runrun's peer-failure message in bounded time, not hang in XLA. Prints one line per survivor
(`rank R: jit error after S s: MESSAGE`) and exits 3; the victim is `argv[1]`."""

import os
import signal
import sys
import time

import jax
import jax.numpy as jnp

import runrun.jax as hvd

victim = int(sys.argv[1])
hvd.init()
r = hvd.rank()
step = jax.jit(lambda x: hvd.allreduce(x, op=hvd.Sum) / hvd.size())
x = jnp.ones(1024)
for _ in range(5):  # every rank: compiled, agreed, warm
    x = step(x)
x.block_until_ready()
print(f"rank {r}: jit path {os.environ.get('RUNRUN_JAX_JIT_PATH', 'ffi')} warm", flush=True)
if r == victim:
    os.kill(os.getpid(), signal.SIGKILL)
start = time.monotonic()
try:
    for _ in range(100000):
        x = step(x)
        x.block_until_ready()
    print(f"rank {r}: no error although rank {victim} died", flush=True)
    os._exit(1)
except jax.errors.JaxRuntimeError as err:
    message = " ".join(str(err).split())
    print(f"rank {r}: jit error after {time.monotonic() - start:.1f} s: {message}", flush=True)
    os._exit(3)

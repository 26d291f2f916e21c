"""`runrun --profile` / RUNRUN_PROFILE=1: where each optimizer step's time goes, per rank, with
no change to the training script (docs/profiling.md).

Why: people scaling a job out time forward/backward, allreduce and the optimizer by hand and
convert bytes into Gbit/s to learn whether the network or the model is the limit. The adapters
see every step, so they report it: an adapter's optimizer calls the four hooks below (the torch
DistributedOptimizer does; a custom loop calls profile_step() at the end of each step; the Keras
and JAX adapters call the same hooks from their optimizer wrappers):

    hooks = runrun.common.profile.active()   # None unless profiling: one check per step
    hooks.gradient_ready(nbytes)   # a gradient's allreduce is enqueued (first one: compute ends)
    hooks.wait_begin()             # the step starts waiting for its allreduces
    hooks.wait_end()               # they are all done; the optimizer's own update starts
    hooks.step_end()               # the update is done: the step ends (profile_step())
    hooks.carry(nbytes)            # double buffering: an allreduce enqueued now is waited
                                   # for in the next step (it is that step's communication)
    hooks.drop_carried()           # flush(): the carried allreduce was waited for outside

Per step: compute = step start to the first gradient ready; communication = first gradient
ready to the end of the wait (the span the allreduces were in flight, negotiation included);
hidden = the part of it before the wait began (overlapped with backward); exposed = the wait;
optimizer = wait end to step end; bytes = the gradients' bytes; algbw = bytes / communication;
busbw = algbw * 2(p-1)/p. With double buffering a step's communication is the allreduce it
waits for, enqueued in the previous step (carry()): compute is then the step start to the
wait. The slowest rank and its lateness come from the runtime (core/negotiation/rank_lateness.h):
the
global set's negotiation places every rank's readiness of each agreed tensor on rank 0's clock
(no clock sync); rank 0 reads each rank's median lateness every 10 steps, at every printed table
and before shutdown (no collective: the hooks do not need to run in step on every rank).
Rank 0 prints the table every RUNRUN_PROFILE_INTERVAL steps when set and at exit, and writes
JSON lines to RUNRUN_PROFILE_OUTPUT (one "step" record per step, one "summary" per table).
Deferred step ends (inside jax.jit on the native path, inside Keras' tf.function): the step end
is recorded by the compiled step itself, with no Python (runrun.jax.profile_marks,
runrun.keras._tf_marks), and the records reach the profiler later through a source
(add_source): the hooks' calls made meanwhile from Python (TensorFlow's allreduce) are queued
with their times, and drain() merges both in time order and applies them up to the last step
end it has. drain() runs when a batch is due (a thread of profile_marks, or the queue's length),
at profile_step(), records(), before shutdown and at exit; the records and tables are the same,
a table is printed when the drain that completes its step runs.
Thread-safety: the hooks are called one at a time, in step order: by the thread that runs the
training step, or (inside jax.jit, tf.function) by the framework's callback thread; drain() and
feed() take a lock and may run on any thread.
"""

import atexit
import itertools
import json
import os
import sys
import threading
import time

from runrun.common import lifecycle, state
from runrun.common.profile_report import Summary, format_table, summarize

_ENV_ON = "RUNRUN_PROFILE"
_ENV_INTERVAL = "RUNRUN_PROFILE_INTERVAL"
_ENV_OUTPUT = "RUNRUN_PROFILE_OUTPUT"
_ENV_LINK = "RUNRUN_PROFILE_LINK_GBIT"  # set by the launcher from a quick --check-network
_LATENESS_EVERY = 10  # steps between rank 0's reads of the runtime's per-rank lateness

_profiler = None
_checked = False
_ids = itertools.count(1)  # StepProfiler.id: names a profiler in native records (int32)


def enabled():
    """True when RUNRUN_PROFILE is set to something other than 0/empty."""
    return os.environ.get(_ENV_ON, "") not in ("", "0")


def active():
    """The process's StepProfiler when profiling is on, else None (checked once)."""
    global _profiler, _checked
    if not _checked:
        _checked = True
        if enabled():
            _profiler = StepProfiler.from_environment()
            atexit.register(_profiler.close)
    return _profiler


def profile_step():
    """Ends a step in a custom training loop (hvd.profile_step()); does nothing unless
    profiling."""
    profiler = active()
    if profiler is not None:
        profiler.step_end()


class StepProfiler:
    """The per-step time split of this rank (see the module comment)."""

    def __init__(self, interval=0, output=None, link_gbit=None, clock=time.perf_counter):
        self.interval = interval          # print every `interval` steps (0: only at exit)
        self._pid = os.getpid()           # a forked child's copy neither reads nor reports
        self.output_path = output
        self.link_gbit = link_gbit
        self._clock = clock
        self._lateness_every = _LATENESS_EVERY
        self._steps = []                  # dicts, one per finished step
        self._lateness = None             # rank 0: the runtime's per-rank lateness, last read
        self._output = None
        self._rank = 0                    # cached while runrun is initialized (not at exit)
        self._size = 1
        self._topology_known = False
        self._carried = None              # (time, bytes) of carry(), for the next step
        self._sources = []                # add_source(): pulled by every drain()
        self._deferred = False            # a source delivers step ends: queue the hooks' calls
        self._pending = []                # (at, seq, hook, arg) queued or fed, not yet applied
        self._seq = itertools.count()
        self._drain_every = 3 * interval if interval else 192  # queued calls (~1 per hook)
        self._lateness_due = False
        self._lock = threading.RLock()
        self.id = next(_ids)              # names this profiler in records made elsewhere
        self._reset(clock())

    @classmethod
    def from_environment(cls):
        def number(name, kind):
            text = os.environ.get(name, "")
            try:
                return kind(text) if text else None
            except ValueError:
                raise ValueError(f"{name}={text!r} is not a number (docs/profiling.md)") from None
        return cls(number(_ENV_INTERVAL, int) or 0, os.environ.get(_ENV_OUTPUT) or None,
                   number(_ENV_LINK, float))

    def _reset(self, now):
        self._start = now
        self._first_ready = None
        self._wait_begin = None
        self._wait_end = None
        self._bytes = 0
        self._from_previous = self._carried is not None  # the communication started before
        if self._from_previous:
            self._first_ready, self._bytes = self._carried
        self._carried = None

    # --- hooks ---
    # `at`: a time read earlier on the same clock; None means now.
    def gradient_ready(self, nbytes, at=None):
        if self._deferred:
            self._queue("gradient_ready", at, int(nbytes))
            return
        self._gradient_ready(self._clock() if at is None else at, int(nbytes))

    def wait_begin(self, at=None):
        if self._deferred:
            self._queue("wait_begin", at)
            return
        self._wait_begin_at(self._clock() if at is None else at)

    def wait_end(self, at=None):
        if self._deferred:
            self._queue("wait_end", at)
            return
        self._wait_end_at(self._clock() if at is None else at)

    def carry(self, nbytes):
        """Double buffering: `nbytes` enqueued now, waited for in the next step."""
        when, total = self._carried or (self._clock(), 0)
        self._carried = (when, total + int(nbytes))

    def drop_carried(self):
        """The carried allreduce was waited for outside a step (flush()): not reported."""
        self._carried = None
        if self._from_previous:
            self._first_ready, self._bytes, self._from_previous = None, 0, False

    def now(self):
        """The hooks' clock, for an `at` that several hooks share."""
        return self._clock()

    def step_end(self, at=None):
        if self._deferred:
            self._queue("step_end", at)
            self.drain()
            return
        self._step_end_at(self._clock() if at is None else at)
        self._read_lateness_if_due()

    # --- deferred step ends ---
    def add_source(self, source):
        """Step ends (and what else) recorded elsewhere: drain() calls source(self) first, which
        hands the records to feed(). From then on the hooks' calls are queued (module
        comment). Added once per source."""
        self._learn_topology()  # now, while runrun runs: the first drain may come at exit
        with self._lock:
            if source not in self._sources:
                self._sources.append(source)
            self._deferred = True

    def feed(self, events):
        """Records from a source: (at, hook, arg) tuples in time order, hook one of
        "gradient_ready" (arg: bytes), "wait_begin", "wait_end", "step_end"."""
        with self._lock:
            self._pending.extend((at, next(self._seq), hook, arg) for at, hook, arg in events)

    def drain(self):
        """Applies the queued and fed calls in time order, up to the last step end."""
        for source in list(self._sources):
            source(self)  # outside the lock: a source may feed several profilers
        with self._lock:
            self._pending.sort()
            last = max((i for i, event in enumerate(self._pending) if event[2] == "step_end"),
                       default=-1)
            ready, self._pending = self._pending[:last + 1], self._pending[last + 1:]
            for at, _seq, hook, arg in ready:
                if hook == "gradient_ready":
                    self._gradient_ready(at, arg)
                elif hook == "wait_begin":
                    self._wait_begin_at(at)
                elif hook == "wait_end":
                    self._wait_end_at(at)
                else:
                    self._step_end_at(at)
            self._read_lateness_if_due()

    def records(self):
        """The step records so far (after drain())."""
        self.drain()
        return list(self._steps)

    def _queue(self, hook, at, arg=None):
        with self._lock:
            self._pending.append((self._clock() if at is None else at, next(self._seq), hook,
                                  arg))
            due = len(self._pending) >= self._drain_every
        if due:
            self.drain()

    # --- applying the hooks ---
    def _gradient_ready(self, at, nbytes):
        if self._first_ready is None:
            self._first_ready = at
        self._bytes += nbytes

    def _wait_begin_at(self, at):
        if self._wait_begin is None:  # the first wait of the step (an adapter may wait per op)
            self._wait_begin = at

    def _wait_end_at(self, at):
        self._wait_end = at

    def _learn_topology(self):
        if not self._topology_known and state.is_initialized():
            self._rank, self._size, self._topology_known = state.rank(), state.size(), True

    def _step_end_at(self, now):
        self._learn_topology()
        self._steps.append(self._record(now))
        self._reset(now)
        done = len(self._steps)
        printing = self.interval and done % self.interval == 0
        if self._rank == 0 and (done % self._lateness_every == 0 or printing):
            self._lateness_due = True
        if printing and self._rank == 0:
            self._read_lateness_if_due()
            self._report(final=False)

    def _read_lateness_if_due(self):
        if self._lateness_due:
            self._lateness_due = False
            self.read_lateness()

    # --- records and reports ---
    def _record(self, now):
        step = now - self._start
        first = self._first_ready if self._first_ready is not None else now
        wait_begin = self._wait_begin if self._wait_begin is not None else first
        # Compute ends at the first gradient of this step or, when the communication started
        # in the previous step (double buffering), at the wait.
        compute_end = first
        if self._from_previous:
            compute_end = self._wait_begin if self._wait_begin is not None else now
        wait_end = self._wait_end if self._wait_end is not None else wait_begin
        wait_begin, wait_end = max(wait_begin, first), max(wait_end, first)
        communication = wait_end - first if self._bytes else 0.0
        exposed = wait_end - wait_begin
        size = self._size
        algbw = self._bytes * 8 / communication / 1e9 if communication > 0 else 0.0
        record = {
            "type": "step", "step": len(self._steps) + 1, "rank": self._rank, "step_s": step,
            "compute_s": compute_end - self._start, "communication_s": communication,
            "hidden_s": max(0.0, communication - exposed), "exposed_s": exposed,
            "optimizer_s": now - wait_end, "bytes": self._bytes, "algbw_gbit": algbw,
            "busbw_gbit": algbw * 2 * (size - 1) / size if size > 1 else 0.0,
        }
        if self._rank == 0 and self.output_path:
            self._write(record)
        return record

    def read_lateness(self):
        """Rank 0: the runtime's per-rank lateness in negotiation (kept for later tables)."""
        if not state.is_initialized():
            return
        lateness = state.runtime().rank_lateness()
        if lateness:
            self._lateness = lateness

    def _summary(self):
        return summarize(self._steps, self._size, self.link_gbit, self._lateness)

    def _report(self, final):
        summary = self._summary()
        text = format_table(summary, final)
        print(text, file=sys.stderr, flush=True)
        if self.output_path:
            self._write(dict(summary.as_json(), type="summary", final=final))

    def _write(self, record):
        if self._output is None:
            self._output = open(self.output_path, "w", encoding="utf-8")
        self._output.write(json.dumps(record) + "\n")
        self._output.flush()

    def close(self):
        """At exit: rank 0 prints the final table (the lateness as last read)."""
        if os.getpid() != self._pid:
            return  # a forked child (data-loader worker): the parent reports
        if self._sources:
            self.drain()
        if self._steps and self._rank == 0:
            self._report(final=True)
        if self._output is not None:
            self._output.close()
            self._output = None


def before_shutdown():
    """At shutdown while the runtime still runs (a hook, runrun.common.lifecycle): rank 0 keeps
    the last per-rank lateness for the final table printed at exit."""
    if _profiler is None or os.getpid() != _profiler._pid:
        return
    if _profiler._sources:
        _profiler.drain()  # the deferred step ends, while the runtime can still be read
    if _profiler._rank == 0 and _profiler._steps:
        _profiler.read_lateness()


lifecycle.add_hooks(before_shutdown=before_shutdown)

__all__ = ["StepProfiler", "Summary", "active", "enabled", "profile_step"]

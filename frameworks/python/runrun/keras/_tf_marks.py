"""runrun --profile's step end inside Keras' TensorFlow train step, with no Python per step
(docs/profiling.md): a few graph ops after the update write the time into a small ring of
tf.Variables; the profiler takes the ring's new entries lazily (StepProfiler.add_source): when
its queue of the allreduce's hook calls is long enough, at records(), shutdown and exit.

Why not a tf.py_function: it costs a Python round trip per step (about 180 µs); these ops cost a
few µs. Nothing here is compiled against TensorFlow (runrun._core never links it).
Per step, inside the tf.function: IdentityN of the updated variables' handles (automatic
control dependencies order it after every write to them: the update), then tf.timestamp(), the
write of that time at count % CAPACITY and count += 1 (after the write, so that every entry
below count is written). tf.timestamp reads the wall clock (CLOCK_REALTIME, microseconds); the
take converts it to the profiler's clock (time.perf_counter) with the offset of both clocks
read then: exact to about a microsecond unless the wall clock is stepped (or slewed fast by
NTP) between a step and the take, which then shifts those step ends. The profiler orders them
by time with the allreduce's hook calls (read on its own clock in the py_function): a step's
end follows its allreduce's end by the py_function's return and the update, tens of µs, and
precedes the next step's allreduce by its forward and backward pass. Keras runs the steps of one
execution (steps_per_execution) one after the other in
a while loop, so the marks of every step are written, in order.
jit_compile=True (XLA) cannot compile tf.timestamp, as it cannot the allreduce's py_function:
Keras on TensorFlow with runrun needs jit_compile=False (its default on CPU).
Thread-safety: the take holds a lock; the graph ops run on TensorFlow's threads.
"""

import threading
import time
import warnings

import tensorflow as tf

CAPACITY = 1024  # step ends between two takes; the profiler takes every 64 steps or sooner

_rings = {}  # StepProfiler.id -> _Ring
_lock = threading.Lock()


class _Ring:
    def __init__(self):
        with tf.init_scope():  # created once, eagerly, outside the function being traced
            self.times = tf.Variable(tf.zeros([CAPACITY], tf.float64), trainable=False,
                                     name="runrun_profile_step_ends")
            self.count = tf.Variable(tf.constant(0, tf.int64), trainable=False,
                                     name="runrun_profile_steps")
        self.taken = 0
        self.lock = threading.Lock()

    def mark(self, variables):
        """The graph ops of one step end (while tracing)."""
        handles = [_handle(v) for v in variables]
        after = tf.raw_ops.IdentityN(input=handles) if handles else []
        with tf.control_dependencies(after):
            now = tf.timestamp()
        n = self.count.read_value()
        written = tf.raw_ops.ResourceScatterUpdate(resource=self.times.handle,
                                                   indices=n % CAPACITY, updates=now)
        with tf.control_dependencies([written]):
            self.count.assign_add(1, read_value=False)

    def __call__(self, profiler):
        """The source: feeds the step ends written since the last take to `profiler`."""
        with self.lock:
            n = int(self.count.numpy())
            if n <= self.taken:
                return
            times = self.times.numpy()
            before = time.perf_counter()
            wall = time.time()
            offset = (before + time.perf_counter()) / 2 - wall
            first = max(self.taken, n - CAPACITY)
            lost, self.taken = first - self.taken, n
        profiler.feed([(float(times[i % CAPACITY]) + offset, "step_end", None)
                       for i in range(first, n)])
        if lost:
            warnings.warn(f"runrun --profile: {lost} step ends of the TensorFlow train step "
                          f"were lost (more than {CAPACITY} steps between two takes)",
                          RuntimeWarning)


def _handle(variable):
    """The resource handle of a Keras (or tf) variable: IdentityN of it is ordered after its
    writes without reading it."""
    value = getattr(variable, "value", variable)
    handle = getattr(value, "handle", None)
    return handle if handle is not None else tf.convert_to_tensor(value)


def step_end(hooks, variables):
    """Ends the profiled step once `variables` are updated, inside the traced train step."""
    with _lock:
        ring = _rings.get(hooks.id)
        if ring is None:
            ring = _rings[hooks.id] = _Ring()
            hooks.add_source(ring)
    ring.mark(variables)

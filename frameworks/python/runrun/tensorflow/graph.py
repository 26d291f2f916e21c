"""Runs an eager collective in whichever mode TensorFlow is in.

Why: runrun's ops are Python calls into runrun._core (nothing is compiled against TF), so
inside tf.function they run as tf.py_function nodes: TF calls back into Python with eager
tensors when the node executes. tf.function's automatic control dependencies run stateful
nodes (py_function is one) in program order, so collectives of one function reach the runtime
in the same order on every rank, and names decided at trace time are the same on every rank.
Cost: one py_function round trip per node (docs/tensorflow.md, docs/benchmarks.md); the
Keras optimizer and DistributedGradientTape fuse all gradients into one node.
Thread-safety: the eager function runs on TF's executor thread; runrun ops may run anywhere.
"""

import tensorflow as tf

from runrun.common.process_sets import process_set_id
from runrun.tensorflow.errors import tf_errors


@tf_errors
def _eager_call(function, inputs):
    return function(*inputs)


def eager():
    return tf.executing_eagerly()


def trace_name(kind, name, process_set):
    """The op's name: `name`; None in eager mode (named per call); in a graph, an unnamed op's
    name decided now, at trace time (every execution of the traced function uses it):
    `<op>[.set<id>].<function>.noname.<n>`, n counting the unnamed ops of that kind and set in
    this trace of the function. A retrace (a new input shape, on some ranks only) names its ops
    as the first trace did, so ranks that retraced and ranks that did not still match."""
    if name is not None:
        return str(name)
    if eager():
        return None
    graph = tf.compat.v1.get_default_graph()
    counters = getattr(graph, "_runrun_unnamed_ops", None)  # FuncGraph has no __dict__
    if counters is None:
        counters = {}
        graph._runrun_unnamed_ops = counters
    set_id = process_set_id(process_set)
    n = counters.get((kind, set_id), 0)
    counters[(kind, set_id)] = n + 1
    prefix = kind if set_id == 0 else f"{kind}.set{set_id}"
    return f"{prefix}.{graph.name}.noname.{n}"


def gradient_name(name):
    """The name of the op in a gradient of the op named `name` (None: unnamed)."""
    return None if name is None else f"{name}.grad"


def run(function, inputs, out_dtypes, out_shapes):
    """function(*eager_inputs) -> list of eager tensors, called now in eager mode or as a
    py_function node of the graph being traced; returns the list of outputs with `out_shapes`
    (TensorShapes, None dimensions for sizes known only when it runs)."""
    if eager():
        return list(_eager_call(function, inputs))
    outputs = tf.py_function(tf_errors(function), list(inputs), list(out_dtypes))
    for output, shape in zip(outputs, out_shapes):
        output.set_shape(shape)
    return list(outputs)

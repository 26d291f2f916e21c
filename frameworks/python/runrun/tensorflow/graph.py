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

from runrun.common.names import op_name
from runrun.tensorflow.errors import tf_errors


@tf_errors
def _eager_call(function, inputs):
    return function(*inputs)


def eager():
    return tf.executing_eagerly()


def trace_name(kind, name, process_set):
    """The op's name: `name`, or in a graph the next unnamed name now, at trace time (so every
    execution of the traced function uses it); None in eager mode (named per call)."""
    if name is not None:
        return str(name)
    return None if eager() else op_name(kind, None, process_set)


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

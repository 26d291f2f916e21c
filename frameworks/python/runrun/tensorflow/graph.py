"""Runs an eager collective in whichever mode TensorFlow is in.

Why: runrun's ops are Python calls into runrun._core (nothing is compiled against TF), so
inside tf.function they run as tf.py_function nodes: TF calls back into Python with eager
tensors when the node executes. tf.function's automatic control dependencies run stateful
nodes (py_function is one) in program order, so collectives of one function reach the runtime
in the same order on every rank, and names decided at trace time are the same on every rank.
Cost: one py_function round trip per node (docs/tensorflow.md, docs/benchmarks.md); the
Keras optimizer and DistributedGradientTape fuse all gradients into one node.
TF1 graph mode (a plain tf.Graph made default, or eager execution disabled: ops build nodes for
a tf.compat.v1.Session) is refused with UnsupportedError naming the op (require_tf2_mode), and
so is a trace that XLA must compile (tf.function(jit_compile=True), or any function traced
inside one): XLA has no kernel for a py_function, and the TensorFlow wheel gives no way to add
one for a runtime call on CPU (docs/tensorflow.md, "XLA"). Auto-clustering
(tf.config.optimizer.set_jit) is not refused: it leaves the py_function out of its clusters.
Thread-safety: the eager function runs on TF's executor thread; runrun ops may run anywhere.
"""

import re

import tensorflow as tf

from runrun.common.names import checked_name
from runrun.common.process_sets import process_set_id
from runrun.tensorflow.errors import UnsupportedError, tf_errors

try:  # the class of tf.function's graphs (and of their tf.cond / while_loop / gradient graphs)
    from tensorflow.python.framework.func_graph import FuncGraph
except ImportError:  # pragma: no cover - then any graph but TF1's has outer_graph
    FuncGraph = None

try:  # the graphs of tf.cond branches and while_loop bodies (TF's own module, stable since 2.0)
    from tensorflow.python.ops.control_flow_v2_func_graphs import ControlFlowFuncGraph
except ImportError:  # pragma: no cover - told apart by their numbered names instead
    ControlFlowFuncGraph = None

try:  # True in a graph traced for tf.function(jit_compile=True), or inside one
    from tensorflow.python.ops.control_flow_util import GraphOrParentsInXlaContext
except ImportError:  # pragma: no cover - XLA then fails at call time, naming EagerPyFunc
    GraphOrParentsInXlaContext = None

_NUMBERED = re.compile(r"_[0-9]+$")
_CONTROL_FLOW_KINDS = {"CondBranchFuncGraph": "cond", "WhileCondFuncGraph": "while_cond",
                       "WhileBodyFuncGraph": "while_body"}
# The graphs TF makes for a tf.function's gradient (and its forward half), numbered like
# control flow: `__backward_forward_42`.
_GENERATED_FUNCTION = re.compile(r"^(__(?:backward|forward|inference)_.+)_[0-9]+$")


@tf_errors
def _eager_call(function, inputs):
    return function(*inputs)


def eager():
    return tf.executing_eagerly()


def _in_function_graph(graph):
    if FuncGraph is not None:
        return isinstance(graph, FuncGraph)
    return hasattr(graph, "outer_graph")


def require_tf2_mode(op):
    """Raises UnsupportedError when `op` is being built into a TF1 graph: neither eager nor
    inside a tf.function (whose graphs are FuncGraphs). runrun's ops run as Python when the
    graph executes (tf.py_function), and their names are decided per tf.function trace; a TF1
    graph run by a tf.compat.v1.Session has neither. Also refuses a graph XLA must compile
    (refuse_xla)."""
    if tf.executing_eagerly():
        return
    graph = tf.compat.v1.get_default_graph()
    if _in_function_graph(graph):
        refuse_xla(op, graph)
        return
    raise UnsupportedError(
        f"{op}: TF1 graph mode (ops built into a tf.Graph made default with as_default(), or "
        "with eager execution disabled, to be run by a tf.compat.v1.Session) is not supported "
        "by runrun.tensorflow; call the op eagerly (TensorFlow 2's default) or inside a "
        "@tf.function (docs/tensorflow.md)")


def refuse_xla(op, graph=None):
    """Raises UnsupportedError when `op` is being traced into a graph that XLA must compile:
    a tf.function(jit_compile=True), a function it calls, or a tf.cond / while_loop in one (TF
    enters its XLA control-flow context around such a trace). Without this XLA refuses the
    whole function when it is first called, naming only `EagerPyFunc`."""
    if GraphOrParentsInXlaContext is None:
        return
    if not GraphOrParentsInXlaContext(graph or tf.compat.v1.get_default_graph()):
        return
    raise UnsupportedError(
        f"{op}: runrun ops cannot be compiled by XLA in TensorFlow (this op is being traced "
        "into a tf.function(jit_compile=True), or a function called from one); use "
        "jit_compile=False for the function that holds the collective, or compute the "
        "gradients in a jit_compile function and reduce them outside it (docs/tensorflow.md, "
        "\"XLA\")")


def trace_name(kind, name, process_set):
    """The op's name: `name`; None in eager mode (named per call); in a graph, an unnamed op's
    name decided now, at trace time (every execution of the traced function uses it):
    `<op>[.set<id>].<function>.noname.<n>`, n counting the unnamed ops of that kind and set in
    this trace of the function (`<function>`: graph_label). A retrace (a new input shape, on
    some ranks only) names its ops as the first trace did, so ranks that retraced and ranks that
    did not still match."""
    if eager():
        return None if name is None else checked_name(kind, name)
    require_tf2_mode(kind)
    if name is not None:
        return checked_name(kind, name)
    graph = tf.compat.v1.get_default_graph()
    set_id = process_set_id(process_set)
    n = _next_in_graph(graph, "_runrun_unnamed_ops", (kind, set_id))
    prefix = kind if set_id == 0 else f"{kind}.set{set_id}"
    return f"{prefix}.{graph_label(graph)}.noname.{n}"


def _next_in_graph(graph, attribute, key):
    """0, 1, 2... for `key` in the counters that `graph` keeps under `attribute`: a graph's
    counters live and die with that trace."""
    counters = getattr(graph, attribute, None)  # FuncGraph has no __dict__
    if counters is None:
        counters = {}
        setattr(graph, attribute, counters)
    n = counters.get(key, 0)
    counters[key] = n + 1
    return n


def _counter_free_kind(graph):
    """What a graph that TF names from a process-wide counter is, without the counter; None for
    a graph named by the user (a tf.function's own graph)."""
    if ControlFlowFuncGraph is not None and isinstance(graph, ControlFlowFuncGraph):
        return _CONTROL_FLOW_KINDS.get(type(graph).__name__, "control_flow")
    generated = _GENERATED_FUNCTION.match(graph.name)
    if generated is not None:
        return generated.group(1)
    if ControlFlowFuncGraph is None and _NUMBERED.search(graph.name) is not None:
        return "control_flow"
    return None


def graph_label(graph):
    """`graph`'s name as every rank gives it. A tf.function's graph is named after its Python
    function. TF names the graph of a tf.cond branch, a while_loop body or a tf.function's
    gradient after the name scope (Keras' optimizer `sgd_1`) and a process-wide counter
    (`sgd_1_cond_true_38`, `__backward_forward_42`): both differ between ranks that built
    different graphs or ran different eager ops before (rank 0 alone evaluating or logging, a
    function retraced on some ranks). Such a graph is named after its outer graph, its kind, and
    its place among the outer graph's inner graphs of that kind that named an op in this trace,
    in trace order: `train_step/cond.0`, `forward/__backward_forward.0` (its kind alone when its
    outer graph is the eager context's)."""
    label = getattr(graph, "_runrun_label", None)
    if label is not None:
        return label
    kind = _counter_free_kind(graph)
    outer = getattr(graph, "outer_graph", None)
    if kind is None:
        label = graph.name
    elif outer is None or not hasattr(outer, "outer_graph"):  # traced from eager code
        label = kind
    else:
        n = _next_in_graph(outer, "_runrun_inner_graphs", kind)
        label = f"{graph_label(outer)}/{kind}.{n}"
    graph._runrun_label = label
    return label


def gradient_name(name):
    """The name of the op in a gradient of the op named `name` (None: unnamed)."""
    return None if name is None else f"{name}.grad"


def run(function, inputs, out_dtypes, out_shapes, op="runrun.tensorflow op"):
    """function(*eager_inputs) -> list of eager tensors, called now in eager mode or as a
    py_function node of the graph being traced; returns the list of outputs with `out_shapes`
    (TensorShapes, None dimensions for sizes known only when it runs). `op` names the op in
    the refusal of TF1 graph mode."""
    if eager():
        return list(_eager_call(function, inputs))
    require_tf2_mode(op)
    outputs = tf.py_function(tf_errors(function), list(inputs), list(out_dtypes))
    for output, shape in zip(outputs, out_shapes):
        output.set_shape(shape)
    return list(outputs)

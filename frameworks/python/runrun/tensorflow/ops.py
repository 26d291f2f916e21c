"""horovod.tensorflow's collectives on tf.Tensors, eager and inside tf.function, with
gradients registered where Horovod registers them.

Each op is runrun.common.collectives' op with the TF adapter (tensor_bridge.ADAPTER), run by
graph.run (directly in eager mode, as a tf.py_function node inside tf.function). Gradients, as
Horovod's TF ops: allreduce's is the same allreduce (op, scale factors) of the incoming
gradient; allgather's is this rank's slice of the averaged gradient; broadcast's is the
averaged gradient on the root and zero elsewhere; alltoall's sends the gradient back along the
received splits; reducescatter's is the gathered gradient (times the set size for Sum) times
the scale factors. Min, Max and Product have no gradient (raises).
dtypes: those of runrun.tensorflow.tensor_bridge.SUPPORTED_DTYPES; allgather, broadcast and
alltoall, which only move bytes, also take uint16 as Horovod's TF ops do (carried as int16).
Thread-safety: any thread may run an op; each op name may have one op in flight.
"""

import tensorflow as tf

from runrun.common import basics
from runrun.common import collectives as _c
from runrun.common.ops import Adasum, Average, Sum, resolve_op
from runrun.common.process_sets import global_process_set
from runrun.tensorflow import graph
from runrun.tensorflow.compression import Compression
from runrun.tensorflow.errors import UnsupportedError
from runrun.tensorflow.tensor_bridge import ADAPTER as _T
from runrun.tensorflow.tensor_bridge import HAS_GPU as _HAS_GPU
from runrun.tensorflow.tensor_bridge import adapter_for as _adapter_for
from runrun.tensorflow.tensor_bridge import carried as _carried
from runrun.tensorflow.tensor_bridge import uncarried as _uncarried


def _require_differentiable(op, what):
    """Horovod's gradient of an allreduce is the same allreduce of the incoming gradients;
    runrun defines it for Average, Sum and Adasum (Min, Max, Product have none)."""
    if op not in (Average, Sum, Adasum):
        raise NotImplementedError(
            f"{what}: no gradient for op={op.name}; only Average, Sum and Adasum are "
            "differentiable")


def _set_size(process_set):
    return process_set.size() if process_set is not global_process_set else basics.size()


def _set_rank(process_set):
    return process_set.rank() if process_set is not global_process_set else basics.rank()


def _as_tensor(tensor):
    return tensor if isinstance(tensor, tf.Tensor) else tf.convert_to_tensor(tensor)


# --- raw ops (no gradient) ---------------------------------------------------------------

def _allreduce_raw(tensor, op, prescale, postscale, name, process_set):
    name = graph.trace_name("allreduce", name, process_set)

    def run(x):
        adapter = _adapter_for((x,)) if _HAS_GPU else _T
        return [_c.allreduce(adapter, x, None, name, op, prescale, postscale,
                             process_set).wait()]

    return graph.run(run, [tensor], [tensor.dtype], [tensor.shape])[0]


def _grouped_allreduce_raw(tensors, op, prescale, postscale, name, process_set, hooks=None):
    """`hooks`: runrun --profile's (runrun.common.profile), called when the op runs."""
    if not tensors:
        return []
    name = graph.trace_name("grouped_allreduce", name, process_set)

    def run(*xs):
        adapter = _adapter_for(xs) if _HAS_GPU else _T
        if hooks is None:
            return _c.grouped_allreduce(adapter, xs, None, name, op, prescale, postscale,
                                        process_set).wait()
        hooks.gradient_ready(sum(x.shape.num_elements() * x.dtype.size for x in xs))
        handle = _c.grouped_allreduce(adapter, xs, None, name, op, prescale, postscale,
                                      process_set)
        hooks.wait_begin()
        reduced = handle.wait()
        hooks.wait_end()
        return reduced

    return graph.run(run, tensors, [t.dtype for t in tensors], [t.shape for t in tensors])


def _gathered_shape(tensor):
    shape = tensor.shape
    return tf.TensorShape(None) if shape.rank is None else \
        tf.TensorShape([None]).concatenate(shape[1:])


def _allgather_raw(tensor, name, process_set):
    name = graph.trace_name("allgather", name, process_set)
    carried = _carried(tensor)

    def run(x):
        return [_c.allgather(_T, x, name, process_set).wait()]

    out = graph.run(run, [carried], [carried.dtype], [_gathered_shape(tensor)])[0]
    return _uncarried(out, tensor.dtype)


def _broadcast_raw(tensor, root_rank, name, process_set):
    name = graph.trace_name("broadcast", name, process_set)
    carried = _carried(tensor)

    def run(x):
        adapter = _adapter_for((x,)) if _HAS_GPU else _T
        return [_c.broadcast(adapter, x, root_rank, name, process_set).wait()]

    out = graph.run(run, [carried], [carried.dtype], [tensor.shape])[0]
    return _uncarried(out, tensor.dtype)


def _alltoall_raw(tensor, splits, name, process_set):
    name = graph.trace_name("alltoall", name, process_set)
    carried = _carried(tensor)
    inputs = [carried] if splits is None else [carried, splits]

    def run(x, s=None):
        output, received = _c.alltoall(_T, x, s, name, process_set).wait()
        return [output, received]

    output, received = graph.run(run, inputs, [carried.dtype, tf.int32],
                                 [_gathered_shape(tensor), tf.TensorShape([None])])
    return [_uncarried(output, tensor.dtype), received]


def _reducescatter_raw(tensor, op, prescale, postscale, name, process_set):
    name = graph.trace_name("reducescatter", name, process_set)

    def run(x):
        return [_c.reducescatter(_T, x, name, op, process_set, prescale, postscale).wait()]

    return graph.run(run, [tensor], [tensor.dtype], [_gathered_shape(tensor)])[0]


# --- differentiable ops with Horovod's names and defaults --------------------------------

def _allreduce_dense(tensor, op, prescale, postscale, name, process_set):
    @tf.custom_gradient
    def forward(x):
        def backward(dy):
            _require_differentiable(op, "allreduce gradient")
            return _allreduce_raw(dy, op, prescale, postscale, graph.gradient_name(name),
                                  process_set)
        return _allreduce_raw(x, op, prescale, postscale, name, process_set), backward

    return forward(tensor)


def _allreduce_sparse(slices, op, prescale, postscale, name, process_set):
    """An IndexedSlices allreduce as Horovod does it: allgather of values and indices."""
    if not graph.eager():
        graph.require_tf2_mode("allreduce")
    if op not in (Average, Sum):
        raise UnsupportedError(
            f"allreduce of tf.IndexedSlices supports op=Average or Sum, got {op.name}; pass "
            "sparse_as_dense=True or a dense tensor")
    if prescale != 1.0 or postscale != 1.0:
        raise UnsupportedError(
            "allreduce of tf.IndexedSlices: prescale_factor and postscale_factor are not "
            "supported (as in Horovod); pass sparse_as_dense=True or a dense tensor")
    base = None if name is None else str(name)
    values = allgather(slices.values, None if base is None else base + ".values",
                       process_set=process_set)
    indices = allgather(slices.indices, None if base is None else base + ".indices",
                        process_set=process_set)
    if op == Average:
        values = values / tf.cast(_set_size(process_set), values.dtype)
    return tf.IndexedSlices(values, indices, dense_shape=slices.dense_shape)


def allreduce(tensor, average=None, device_dense="", device_sparse="",
              compression=Compression.none, op=None, prescale_factor=1.0, postscale_factor=1.0,
              name=None, process_set=global_process_set, ignore_name_scope=False):
    """The reduction (op, default Average) of `tensor` over the process set, as a new tensor
    (tf.IndexedSlices: gathered values and indices). Differentiable for Average and Sum.
    device_dense, device_sparse and ignore_name_scope are accepted for Horovod compatibility."""
    del device_dense, device_sparse, ignore_name_scope
    op = resolve_op(op, average)
    if isinstance(tensor, tf.IndexedSlices):
        return _allreduce_sparse(tensor, op, prescale_factor, postscale_factor, name,
                                 process_set)
    compressed, ctx = compression.compress(_as_tensor(tensor))
    reduced = _allreduce_dense(compressed, op, prescale_factor, postscale_factor, name,
                               process_set)
    return compression.decompress(reduced, ctx)


def grouped_allreduce(tensors, average=None, device_dense="", device_sparse="",
                      compression=Compression.none, op=None, prescale_factor=1.0,
                      postscale_factor=1.0, process_set=global_process_set,
                      ignore_name_scope=False, name=None):
    """One allreduce of a list of tensors, negotiated and completed as a unit (one
    py_function node inside tf.function). Differentiable for Average and Sum. The
    tf.IndexedSlices of the list are allgathered (values and indices) and stay IndexedSlices,
    as Horovod's. device_dense, device_sparse, ignore_name_scope: accepted, ignored."""
    del device_dense, device_sparse, ignore_name_scope
    op = resolve_op(op, average)
    tensors = list(tensors)
    sparse = [i for i, t in enumerate(tensors) if isinstance(t, tf.IndexedSlices)]
    if sparse:
        out = list(tensors)
        for i in sparse:
            out[i] = _allreduce_sparse(tensors[i], op, prescale_factor, postscale_factor,
                                       None if name is None else f"{name}.sparse.{i}",
                                       process_set)
        dense = [i for i, t in enumerate(tensors) if not isinstance(t, tf.IndexedSlices)]
        reduced = grouped_allreduce([tensors[i] for i in dense], compression=compression,
                                    op=op, prescale_factor=prescale_factor,
                                    postscale_factor=postscale_factor,
                                    process_set=process_set, name=name)
        for i, r in zip(dense, reduced):
            out[i] = r
        return out
    pairs = [compression.compress(_as_tensor(t)) for t in tensors]
    if not pairs:
        return []

    @tf.custom_gradient
    def forward(*xs):
        def backward(*dys):
            _require_differentiable(op, "grouped_allreduce gradient")
            return _grouped_allreduce_raw(list(dys), op, prescale_factor, postscale_factor,
                                          graph.gradient_name(name), process_set)
        return _grouped_allreduce_raw(list(xs), op, prescale_factor, postscale_factor, name,
                                      process_set), backward

    reduced = forward(*[p[0] for p in pairs])
    return [compression.decompress(r, p[1]) for r, p in zip(reduced, pairs)]


def allgather(tensor, name=None, ignore_name_scope=False, process_set=global_process_set):
    """The concatenation of every rank's `tensor` along the first dimension (sizes may differ
    per rank). The gradient is this rank's slice of the averaged gradient."""
    del ignore_name_scope
    tensor = _as_tensor(tensor)

    @tf.custom_gradient
    def forward(x):
        def backward(dy):
            grad_name = graph.gradient_name(name)
            reduced = _allreduce_raw(dy, Average, 1.0, 1.0, grad_name, process_set)
            rows = tf.reshape(tf.shape(x, out_type=tf.int64)[0], [1])
            sizes = _allgather_raw(rows, None if grad_name is None else grad_name + ".sizes",
                                   process_set)
            offsets = tf.concat([tf.zeros([1], tf.int64), tf.cumsum(sizes)], 0)
            me = _set_rank(process_set)
            return reduced[offsets[me]:offsets[me + 1]]
        return _allgather_raw(x, name, process_set), backward

    return forward(tensor)


def broadcast(tensor, root_rank, name=None, ignore_name_scope=False,
              process_set=global_process_set):
    """root_rank's `tensor` on every rank, as a new tensor. The gradient is the averaged
    gradient on the root and zero elsewhere."""
    del ignore_name_scope
    tensor = _as_tensor(tensor)

    @tf.custom_gradient
    def forward(x):
        def backward(dy):
            reduced = _allreduce_raw(dy, Average, 1.0, 1.0, graph.gradient_name(name),
                                     process_set)
            return reduced if basics.rank() == root_rank else reduced * 0
        return _broadcast_raw(x, root_rank, name, process_set), backward

    return forward(tensor)


def alltoall(tensor, splits=None, name=None, ignore_name_scope=False,
             process_set=global_process_set):
    """Sends splits[p] first-dimension rows to rank p (equal parts when None). Returns, as
    Horovod, the output alone when `splits` is None, else (output, received_splits) with
    received_splits an int32 tensor. The gradient of `tensor` goes back along the received
    splits."""
    del ignore_name_scope
    tensor = _as_tensor(tensor)
    given = splits is not None
    if given and not isinstance(splits, tf.Tensor):
        splits = tf.constant([int(s) for s in splits], dtype=tf.int32)

    @tf.custom_gradient
    def forward(x):
        output, received = _alltoall_raw(x, splits, name, process_set)

        def backward(dy, _d_received=None):
            return _alltoall_raw(dy, received, graph.gradient_name(name), process_set)[0]
        return (output, received), backward

    output, received = forward(tensor)
    return (output, tf.stop_gradient(received)) if given else output


def reducescatter(tensor, device_dense="", compression=Compression.none, op=Average,
                  name=None, process_set=global_process_set, ignore_name_scope=False,
                  prescale_factor=1.0, postscale_factor=1.0):
    """Reduces `tensor` over the set (Average or Sum) and returns this rank's slice of the
    first dimension (the first dim0 % size ranks get one extra row)."""
    del device_dense, ignore_name_scope
    op = _c._reducescatter_op(op)
    compressed, ctx = compression.compress(_as_tensor(tensor))

    @tf.custom_gradient
    def forward(x):
        def backward(dy):
            gathered = _allgather_raw(dy, graph.gradient_name(name), process_set)
            scale = prescale_factor * postscale_factor
            if op == Sum:
                scale *= _set_size(process_set)
            return gathered if scale == 1.0 else gathered * tf.cast(scale, gathered.dtype)
        return _reducescatter_raw(x, op, prescale_factor, postscale_factor, name,
                                  process_set), backward

    return compression.decompress(forward(compressed), ctx)


def grouped_allgather(tensors, name=None, ignore_name_scope=False,
                      process_set=global_process_set):
    """allgather of each tensor of a list (each differentiable as allgather).
    ignore_name_scope: accepted, ignored."""
    del ignore_name_scope
    return [allgather(t, None if name is None else f"{name}.{i}", process_set=process_set)
            for i, t in enumerate(tensors)]


def grouped_reducescatter(tensors, device_dense="", compression=Compression.none, op=Average,
                          process_set=global_process_set, prescale_factor=1.0,
                          postscale_factor=1.0, name=None):
    """reducescatter of each tensor of a list. Horovod's arguments in its order; `name`
    (runrun's, keyword) names the ops `<name>.<i>`."""
    return [reducescatter(t, device_dense, compression, op,
                          None if name is None else f"{name}.{i}", process_set,
                          prescale_factor=prescale_factor, postscale_factor=postscale_factor)
            for i, t in enumerate(tensors)]


def join(process_set=global_process_set):
    """This rank ran out of data: until every rank joined, its allreduces contribute zeros.
    Returns the last rank to join (an int32 scalar tensor)."""
    def run():
        return [tf.constant(_c.join(process_set), dtype=tf.int32)]
    return graph.run(run, [], [tf.int32], [tf.TensorShape([])], op="join")[0]


def barrier(process_set=global_process_set):
    """Blocks until every rank of the set reached the barrier (a node inside tf.function)."""
    def run():
        _c.barrier(process_set)
        return [tf.constant(0, dtype=tf.int32)]
    graph.run(run, [], [tf.int32], [tf.TensorShape([])], op="barrier")

"""runrun.tensorflow's public functions take Horovod's arguments in Horovod's order with
Horovod's defaults (horovod.tensorflow of Horovod's latest release: __init__.py, mpi_ops.py,
functions.py), runrun's extra keyword arguments after them; and the calls whose signature was
changed to match work positionally, eager and inside tf.function."""

import inspect

import numpy as np
import pytest
import tensorflow as tf

REQUIRED = inspect.Parameter.empty


def horovod_signatures(hvd):
    none, gps, avg = hvd.Compression.none, hvd.global_process_set, hvd.Average
    tape = [("gradtape", REQUIRED), ("device_dense", ""), ("device_sparse", ""),
            ("compression", none), ("sparse_as_dense", False), ("op", avg),
            ("gradient_predivide_factor", 1.0), ("num_groups", 0), ("groups", None),
            ("process_set", gps)]
    return {
        "allreduce": [("tensor", REQUIRED), ("average", None), ("device_dense", ""),
                      ("device_sparse", ""), ("compression", none), ("op", None),
                      ("prescale_factor", 1.0), ("postscale_factor", 1.0), ("name", None),
                      ("process_set", gps), ("ignore_name_scope", False)],
        "grouped_allreduce": [("tensors", REQUIRED), ("average", None), ("device_dense", ""),
                              ("device_sparse", ""), ("compression", none), ("op", None),
                              ("prescale_factor", 1.0), ("postscale_factor", 1.0),
                              ("process_set", gps), ("ignore_name_scope", False),
                              ("name", None)],
        "allgather": [("tensor", REQUIRED), ("name", None), ("ignore_name_scope", False),
                      ("process_set", gps)],
        "grouped_allgather": [("tensors", REQUIRED), ("name", None),
                              ("ignore_name_scope", False), ("process_set", gps)],
        "broadcast": [("tensor", REQUIRED), ("root_rank", REQUIRED), ("name", None),
                      ("ignore_name_scope", False), ("process_set", gps)],
        "broadcast_": [("variables", REQUIRED), ("root_rank", REQUIRED), ("name", None),
                       ("process_set", gps)],
        "alltoall": [("tensor", REQUIRED), ("splits", None), ("name", None),
                     ("ignore_name_scope", False), ("process_set", gps)],
        "reducescatter": [("tensor", REQUIRED), ("device_dense", ""), ("compression", none),
                          ("op", avg), ("name", None), ("process_set", gps),
                          ("ignore_name_scope", False), ("prescale_factor", 1.0),
                          ("postscale_factor", 1.0)],
        "grouped_reducescatter": [("tensors", REQUIRED), ("device_dense", ""),
                                  ("compression", none), ("op", avg), ("process_set", gps),
                                  ("prescale_factor", 1.0), ("postscale_factor", 1.0)],
        "join": [],
        "broadcast_variables": [("variables", REQUIRED), ("root_rank", REQUIRED),
                                ("process_set", gps), ("inplace", False)],
        "broadcast_object": [("obj", REQUIRED), ("root_rank", 0), ("session", None),
                             ("name", None), ("process_set", gps)],
        "broadcast_object_fn": [("root_rank", 0), ("session", None), ("name", None),
                                ("process_set", gps)],
        "allgather_object": [("obj", REQUIRED), ("session", None), ("name", None),
                             ("process_set", gps)],
        "DistributedGradientTape": tape + [("scale_local_gradients", True)],
        "PartialDistributedGradientTape": tape + [("local_layers", None),
                                                  ("scale_local_gradients", True)],
        "DistributedOptimizer": [("optimizer", REQUIRED), ("name", None),
                                 ("use_locking", False), ("device_dense", ""),
                                 ("device_sparse", ""), ("compression", none),
                                 ("sparse_as_dense", False), ("backward_passes_per_step", 1),
                                 ("op", avg), ("gradient_predivide_factor", 1.0),
                                 ("average_aggregated_gradients", False), ("num_groups", 0),
                                 ("groups", None), ("process_set", gps),
                                 ("scale_local_gradients", True)],
        "size_op": [("process_set_id", 0), ("name", None)],
        "process_set_included_op": [("process_set_id", 0), ("name", None)],
        "rank_op": [("name", None)],
        "local_rank_op": [("name", None)],
        "local_size_op": [("name", None)],
    }


def test_every_function_takes_horovods_arguments_in_horovods_order(hvd):
    for function, expected in horovod_signatures(hvd).items():
        params = list(inspect.signature(getattr(hvd, function)).parameters.values())
        got = [(p.name, p.default) for p in params[:len(expected)]]
        assert got == expected, function
        assert all(p.kind == p.POSITIONAL_OR_KEYWORD for p in params[:len(expected)]), function
    gradient = inspect.signature(hvd.DistributedGradientTape(tf.GradientTape()).gradient)
    assert list(gradient.parameters)[:4] == ["target", "sources", "output_gradients",
                                             "use_generic_names"]


MODES = ["eager", "function"]


def run(mode, function, *args):
    return function(*args) if mode == "eager" else tf.function(function)(*args)


@pytest.mark.parametrize("mode", MODES)
def test_size_op_and_process_set_included_op_take_a_process_set_id(hvd, mode):
    n, r = hvd.size(), hvd.rank()
    evens = hvd.add_process_set([k for k in range(n) if k % 2 == 0])
    try:
        sid = evens.process_set_id
        assert int(run(mode, lambda: hvd.size_op(sid))) == len(evens.ranks)
        assert int(run(mode, lambda: hvd.size_op(process_set_id=sid, name="s"))) == \
            len(evens.ranks)
        assert int(run(mode, lambda: hvd.size_op())) == n
        assert int(run(mode, lambda: hvd.size_op(process_set=evens))) == len(evens.ranks)
        assert int(run(mode, lambda: hvd.process_set_included_op(sid))) == int(r % 2 == 0)
        assert int(run(mode, lambda: hvd.process_set_included_op())) == 1
        assert int(run(mode, lambda: hvd.process_set_included_op(evens))) == int(r % 2 == 0)
        assert int(run(mode, lambda: hvd.process_set_included_op(sid + 1000))) == -3
        assert int(run(mode, lambda: hvd.local_size_op("ls"))) == hvd.local_size()
        assert int(run(mode, lambda: hvd.local_rank_op("lr"))) == hvd.local_rank()
    finally:
        hvd.remove_process_set(evens)
    with pytest.raises(ValueError, match="no process set with id"):
        hvd.size_op(sid + 1000)


@pytest.mark.parametrize("mode", MODES)
def test_grouped_ops_in_horovods_positional_order(hvd, mode):
    n, r = hvd.size(), hvd.rank()
    xs = [tf.fill([2 * n, 2], float(r + 1)), tf.fill([n], float(r))]
    gps = hvd.global_process_set

    def ops(a, b):
        reduced = hvd.grouped_allreduce([a, b], None, "", "", hvd.Compression.none, hvd.Sum,
                                        1.0, 1.0, gps, True, "sig.grouped_allreduce")
        gathered = hvd.grouped_allgather([a, b], "sig.grouped_allgather", True, gps)
        scattered = hvd.grouped_reducescatter([a], "", hvd.Compression.none, hvd.Sum, gps,
                                              1.0, 2.0)
        return reduced, gathered, scattered

    reduced, gathered, scattered = run(mode, ops, *xs)
    total = sum(k + 1 for k in range(n))
    assert np.array_equal(reduced[0].numpy(), np.full([2 * n, 2], float(total)))
    assert np.array_equal(reduced[1].numpy(), np.full([n], float(total - n)))
    assert gathered[0].shape == [2 * n * n, 2] and gathered[1].shape == [n * n]
    assert np.array_equal(scattered[0].numpy(), np.full([2, 2], 2.0 * total))


@pytest.mark.parametrize("mode", MODES)
def test_grouped_allreduce_gathers_indexed_slices_as_horovod(hvd, mode):
    n, r = hvd.size(), hvd.rank()
    slices = tf.IndexedSlices(tf.fill([1, 3], float(r + 1)), tf.constant([r]),
                              tf.constant([n, 3]))

    def reduce(dense):
        return hvd.grouped_allreduce([slices, dense], op=hvd.Sum)

    sparse_out, dense_out = run(mode, reduce, tf.ones([2]))
    assert isinstance(sparse_out, tf.IndexedSlices)
    assert sparse_out.indices.numpy().tolist() == list(range(n))
    assert np.array_equal(tf.convert_to_tensor(sparse_out).numpy(),
                          np.repeat(np.arange(1, n + 1, dtype=np.float32)[:, None], 3, 1))
    assert np.array_equal(dense_out.numpy(), [float(n)] * 2)
    with pytest.raises(NotImplementedError, match="prescale_factor"):
        hvd.allreduce(slices, op=hvd.Sum, prescale_factor=2.0)
    with pytest.raises(NotImplementedError, match="op=Average or Sum"):
        hvd.allreduce(slices, op=hvd.Max)


@pytest.mark.parametrize("mode", MODES)
def test_broadcast_in_place_assigns_and_returns_roots_values(hvd, mode):
    n, r = hvd.size(), hvd.rank()
    a, b = tf.Variable([float(r)] * 2), tf.Variable(10 * r)
    values = run(mode, lambda: hvd.broadcast_([a, b], n - 1, "sig.bcast_"))
    assert [v.numpy().tolist() for v in values] == [[float(n - 1)] * 2, 10 * (n - 1)]
    assert a.numpy().tolist() == [float(n - 1)] * 2 and int(b.numpy()) == 10 * (n - 1)


def test_broadcast_object_fn_and_tape_gradient_with_horovods_arguments(hvd):
    r = hvd.rank()
    bcast = hvd.broadcast_object_fn(root_rank=0, name="sig.object_fn")
    assert bcast({"rank": r}) == {"rank": 0} and bcast([r]) == [0]
    w = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(w) * float(r + 1)
    grads = hvd.DistributedGradientTape(tape).gradient(loss, [w], None, True)
    assert np.allclose(grads[0].numpy(), [(hvd.size() + 1) / 2] * 2)

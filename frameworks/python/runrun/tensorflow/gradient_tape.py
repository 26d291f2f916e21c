"""DistributedGradientTape: a tf.GradientTape whose gradient() returns gradients averaged
(op) over the process set, as horovod.tensorflow.DistributedGradientTape.

Why: the TF 2 custom training loop's one-line change. The dense gradients go through one
grouped allreduce (one py_function node inside tf.function; `num_groups` or `groups` split
them into several), compressed on the wire by `compression`; tf.IndexedSlices are gathered
(or densified first with sparse_as_dense). gradient_predivide_factor splits the averaging
into a prescale 1/f and a postscale f (op=Average only), as Horovod does. Sources registered
with register_local_source (PartialDistributedGradientTape: the variables of local_layers) keep
their own gradient, divided by the set's size unless scale_local_gradients=False;
get_local_and_global_gradients returns the two kinds apart. On a rank outside `process_set`
nothing is reduced: gradient() returns this rank's own gradients (local sources still scaled), as
Horovod's.
Thread-safety: as tf.GradientTape (one thread).
"""

import tensorflow as tf

from runrun.common.exceptions import InvalidArgumentError
from runrun.common.grouping import group_positions, resolve_groups
from runrun.common.local_layers import local_layer_variables
from runrun.common.ops import Average, resolve_op
from runrun.common.process_sets import global_process_set
from runrun.tensorflow.compression import Compression
from runrun.tensorflow.ops import allreduce, grouped_allreduce


def _scale_factors(op, gradient_predivide_factor):
    if gradient_predivide_factor != 1.0:
        if op != Average:
            raise InvalidArgumentError(
                "gradient_predivide_factor other than 1.0 needs op=Average")
        return 1.0 / gradient_predivide_factor, gradient_predivide_factor
    return 1.0, 1.0


def allreduce_gradients(grads, op=Average, compression=Compression.none,
                        sparse_as_dense=False, gradient_predivide_factor=1.0, groups=0,
                        variables=None, process_set=global_process_set, name=None):
    """The reduced gradients (None stays None) that DistributedGradientTape returns; `groups` as
    runrun.common.grouping.resolve_groups returns it (lists of variables need `variables`, the
    variable of each gradient)."""
    op = resolve_op(op)
    prescale, postscale = _scale_factors(op, gradient_predivide_factor)
    grads = list(grads)
    if not _member(process_set):  # Horovod's: this rank's own gradients, unreduced
        return [tf.convert_to_tensor(g) if sparse_as_dense and isinstance(g, tf.IndexedSlices)
                else g for g in grads]
    out = list(grads)
    dense = []
    for i, g in enumerate(grads):
        if g is None:
            continue
        if isinstance(g, tf.IndexedSlices):
            if sparse_as_dense:
                grads[i] = tf.convert_to_tensor(g)
            else:
                out[i] = allreduce(g, op=op, process_set=process_set)
                continue
        dense.append(i)
    if not dense:
        return out
    if isinstance(groups, list) and variables is None:
        raise InvalidArgumentError("groups= needs the variables the gradients belong to")
    for k, group in enumerate(group_positions(dense, variables, groups)):
        group_name = None if name is None else f"{name}.{k}"
        reduced = grouped_allreduce([grads[i] for i in group], compression=compression, op=op,
                                    prescale_factor=prescale, postscale_factor=postscale,
                                    process_set=process_set, name=group_name)
        for i, r in zip(group, reduced):
            out[i] = r
    return out


def _member(process_set):
    """Whether this rank belongs to `process_set` (the global set: always)."""
    return process_set is global_process_set or process_set.included()


def _scaled_down(grad, size):
    if isinstance(grad, tf.IndexedSlices):
        return tf.IndexedSlices(grad.values / size, grad.indices, grad.dense_shape)
    return grad / size


class _DistributedGradientTape(tf.GradientTape):
    def register_local_source(self, source):
        """Registers `source` as local to each rank (as Horovod's): its gradient is not reduced
        over the ranks but returned as this rank computed it (divided by the process set's
        size when scale_local_gradients, the default)."""
        self._runrun_local[id(source)] = source  # held: the id stays unique

    def gradient(self, target, sources, output_gradients=None, use_generic_names=False,
                 **kwargs):
        """Horovod's arguments (use_generic_names: accepted, ignored: unnamed ops are named
        alike on every rank anyway); **kwargs go to tf.GradientTape.gradient."""
        del use_generic_names
        grads = super().gradient(target, sources, output_gradients, **kwargs)
        nested = tf.nest.flatten(grads)
        flat_sources = tf.nest.flatten(sources)
        local = self._runrun_local
        shared = [i for i, s in enumerate(flat_sources) if id(s) not in local]
        out = list(nested)
        reduced = allreduce_gradients([nested[i] for i in shared],
                                      variables=[flat_sources[i] for i in shared],
                                      **self._runrun_options)
        for i, g in zip(shared, reduced):
            out[i] = g
        if local and self._runrun_scale_local:
            size = self._runrun_options["process_set"].size()
            for i, s in enumerate(flat_sources):
                if id(s) in local and out[i] is not None:
                    out[i] = _scaled_down(out[i], size)
        return tf.nest.pack_sequence_as(grads, out)

    def get_local_and_global_gradients(self, target, sources, output_gradients=None,
                                       use_generic_names=False):
        """gradient(), split as Horovod's: (local, global), each a list of (source, gradient)
        pairs in the order of `sources`; local: the sources registered with
        register_local_source (PartialDistributedGradientTape's local layers), global: the
        others, reduced over the process set. For what must be computed on each part apart
        (a gradient norm: the global part is the same on every rank, the local one not)."""
        grads = self.gradient(target, sources, output_gradients, use_generic_names)
        local, shared = [], []
        for source, grad in zip(tf.nest.flatten(sources), tf.nest.flatten(grads)):
            (local if id(source) in self._runrun_local else shared).append((source, grad))
        return local, shared


def DistributedGradientTape(gradtape, device_dense="", device_sparse="",
                            compression=Compression.none, sparse_as_dense=False, op=Average,
                            gradient_predivide_factor=1.0, num_groups=0, groups=None,
                            process_set=global_process_set, scale_local_gradients=True):
    """Wraps `gradtape` (after its `with` block or before): gradient() returns reduced
    gradients, but for sources given to register_local_source. device_dense and device_sparse
    are accepted for Horovod compatibility."""
    del device_dense, device_sparse
    if not isinstance(gradtape, tf.GradientTape):
        raise InvalidArgumentError(
            f"DistributedGradientTape wraps a tf.GradientTape, got {type(gradtape).__name__}")
    _scale_factors(resolve_op(op), gradient_predivide_factor)  # fail now, not in gradient()
    groups = resolve_groups(num_groups, groups, "DistributedGradientTape", stacklevel=2)
    tape = _DistributedGradientTape.__new__(_DistributedGradientTape)
    tape.__dict__.update(gradtape.__dict__)
    tape._runrun_options = dict(
        op=op, compression=compression, sparse_as_dense=sparse_as_dense,
        gradient_predivide_factor=gradient_predivide_factor, groups=groups,
        process_set=process_set)
    tape._runrun_local = {}
    tape._runrun_scale_local = bool(scale_local_gradients)
    return tape


def PartialDistributedGradientTape(gradtape, device_dense="", device_sparse="",
                                   compression=Compression.none, sparse_as_dense=False,
                                   op=Average, gradient_predivide_factor=1.0, num_groups=0,
                                   groups=None, process_set=global_process_set,
                                   local_layers=None, scale_local_gradients=True):
    """DistributedGradientTape whose `local_layers` (a Keras layer or a list) keep their
    gradients local to each rank (register_local_source on each of their trainable variables),
    as Horovod's."""
    tape = DistributedGradientTape(
        gradtape, device_dense=device_dense, device_sparse=device_sparse,
        compression=compression, sparse_as_dense=sparse_as_dense, op=op,
        gradient_predivide_factor=gradient_predivide_factor, num_groups=num_groups,
        groups=groups, process_set=process_set, scale_local_gradients=scale_local_gradients)
    for var in local_layer_variables(local_layers, "PartialDistributedGradientTape"):
        tape.register_local_source(var)
    return tape

"""broadcast_parameters / broadcast_optimizer_state for pytrees (Horovod's names): root_rank's
values of every leaf on every rank, returned as a new pytree of the same structure.

Why: JAX keeps parameters and optimizer state in immutable pytrees, so where horovod.torch
broadcasts into the model in place, these return the broadcast pytree. Every leaf's broadcast
is started before the first is waited for; each is named after the leaf's path
("broadcast_parameters.<path>"), so ranks match them whatever their call order.
Python scalars (bool, int, float) are broadcast too, exactly (through numpy, whatever
jax_enable_x64 says), and come back as Python scalars of their type; None and other leaf-less
nodes stay as they are. Inside jax.jit the leaves are broadcast by ordered callbacks
(jit_ops.py). Thread-safety: any thread, one call at a time.
"""

import jax
import jax.numpy as jnp
import numpy as np

from runrun.common import collectives as _c
from runrun.common.numpy_tensors import ADAPTER as _NP
from runrun.common.process_sets import global_process_set
from runrun.jax import jit_ops
from runrun.jax.tensor_bridge import ADAPTER as _J

_SCALARS = (bool, int, float)


def _leaf_names(prefix, paths):
    return [f"{prefix}.{jax.tree_util.keystr(path) or 'root'}" for path in paths]


def broadcast_parameters(params, root_rank=0, process_set=global_process_set,
                         prefix="broadcast_parameters"):
    """root_rank's `params` (any pytree of arrays and Python scalars) on every rank."""
    with_paths, treedef = jax.tree_util.tree_flatten_with_path(params)
    paths = [p for p, _ in with_paths]
    leaves = [leaf for _, leaf in with_paths]
    names = _leaf_names(prefix, paths)
    if any(isinstance(leaf, jax.core.Tracer) for leaf in leaves):
        out = [jit_ops.broadcast(jnp.asarray(leaf), root_rank, name, process_set)
               for leaf, name in zip(leaves, names)]
        return jax.tree_util.tree_unflatten(treedef, out)
    handles = [_c.broadcast(_NP, np.asarray(leaf), root_rank, name, process_set, False)
               if isinstance(leaf, _SCALARS) else
               _c.broadcast(_J, leaf, root_rank, name, process_set, False)
               for leaf, name in zip(leaves, names)]
    out = []
    for leaf, handle in zip(leaves, handles):
        value = handle.wait()
        out.append(type(leaf)(value.item()) if isinstance(leaf, _SCALARS) else value)
    return jax.tree_util.tree_unflatten(treedef, out)


def broadcast_optimizer_state(opt_state, root_rank=0, process_set=global_process_set):
    """root_rank's optax optimizer state (a pytree) on every rank."""
    return broadcast_parameters(opt_state, root_rank, process_set,
                                prefix="broadcast_optimizer_state")

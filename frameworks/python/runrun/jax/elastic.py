"""Elastic training for JAX: `run` and `JaxState`, the pytree counterpart of Horovod's
TorchState (docs/elastic.md, "JAX").

    state = hvd.elastic.JaxState(params=params, opt_state=opt_state, step=0)
    @hvd.elastic.run
    def train(state):
        while state.step < steps:
            state.params, state.opt_state = update(state.params, state.opt_state, batch)
            state.step += 1
            state.commit()

JAX's values are immutable pytrees the script replaces at every step, so the state holds them
as attributes the script assigns (state.params = ...), not as objects updated in place.
Thread-safety: the state is used from the training thread.
"""

import jax
import jax.numpy as jnp
import numpy as np

from runrun.common import basics
from runrun.elastic import HorovodInternalError, HostsUpdatedInterrupt, ObjectState, State
from runrun.elastic import run_fn as _run_fn
from runrun.elastic.framework_errors import translating
from runrun.elastic.objects import broadcast_object
from runrun.jax.functions import broadcast_parameters


def _framework_errors():
    return (jax.errors.JaxRuntimeError,)


def run(func):
    """Decorator: runs `func(state, ...)` again after every reset of the job (runrun.elastic's
    loop); a runrun failure inside jax.jit (a JaxRuntimeError naming it) counts as the
    HorovodInternalError it is."""
    return _run_fn(translating(func, _framework_errors))


def _is_pytree_of_arrays(value):
    leaves = jax.tree_util.tree_leaves(value)
    return bool(leaves) and any(isinstance(leaf, (jax.Array, np.ndarray)) for leaf in leaves)


def _copy(tree):
    """A copy of every array leaf: a later in-place change (numpy) or a donated buffer
    (jax.jit(donate_argnums=...)) must not reach the committed values."""
    return jax.tree_util.tree_map(
        lambda leaf: jnp.array(leaf, copy=True) if isinstance(leaf, jax.Array) else
        np.array(leaf, copy=True) if isinstance(leaf, np.ndarray) else leaf, tree)


class JaxState(ObjectState):
    """`JaxState(params=..., opt_state=..., epoch=0)`: keyword arguments whose leaves include
    arrays (jax.Array or numpy) are pytree attributes: save() copies them, restore() puts the
    copies back, sync() broadcasts each from rank 0 with runrun.jax.broadcast_parameters (array
    leaves come back as jax.Arrays). Other keyword arguments are plain attributes
    (ObjectState: deep-copied, pickled at sync). Read and assign them as state.params..."""

    def __init__(self, **kwargs):
        trees = {name: value for name, value in kwargs.items() if _is_pytree_of_arrays(value)}
        plain = {name: value for name, value in kwargs.items() if name not in trees}
        self._saved_trees = {name: _copy(value) for name, value in trees.items()}
        for name, value in trees.items():
            setattr(self, name, value)
        super().__init__(bcast_object=broadcast_object, get_rank=basics.rank, **plain)

    def save(self):
        self._saved_trees = {name: _copy(getattr(self, name)) for name in self._saved_trees}
        super().save()

    def restore(self):
        for name, value in self._saved_trees.items():
            setattr(self, name, _copy(value))
        super().restore()

    def sync(self):
        for name in sorted(self._saved_trees):
            setattr(self, name, broadcast_parameters(getattr(self, name), root_rank=0,
                                                     prefix=f"elastic.{name}"))
        super().sync()
        # The copies taken at the last commit follow the synced state (new ranks had none).
        self._saved_trees = {name: _copy(getattr(self, name)) for name in self._saved_trees}


__all__ = ["HorovodInternalError", "HostsUpdatedInterrupt", "JaxState", "ObjectState", "State",
           "run"]

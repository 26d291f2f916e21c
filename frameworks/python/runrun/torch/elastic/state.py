"""TorchState: modules, optimizers, ElasticSamplers and plain attributes, committed and restored
together (Horovod's hvd.elastic.TorchState).

Every keyword argument that is a torch.nn.Module, a torch.optim.Optimizer or an ElasticSampler
(`model=` and `optimizer=` like any other: a GAN's `disc=`, `disc_opt=` too) is kept by
reference and handled by its kind: its state_dict copied at save, loaded back at restore,
broadcast from rank 0 at sync. Any other value is a plain attribute (ObjectState: deep-copied,
broadcast as an object). Assigning a new object to a handled name (`state.model = other`)
makes the state follow it, as in Horovod.
Thread-safety: one training thread, as the objects it holds.
"""

import copy

import torch

from runrun.common import basics
from runrun.elastic.state import ObjectState
from runrun.torch.elastic.sampler import ElasticSampler
from runrun.torch.functions import broadcast_object, broadcast_optimizer_state, broadcast_parameters


def _forget_pending_allreduces(optimizer):
    """A DistributedOptimizer whose step failed still holds the handles of that step; the
    next generation starts without them."""
    for pending in ("_handles", "_densified"):
        entries = getattr(optimizer, pending, None)
        if isinstance(entries, dict):
            entries.clear()
    if hasattr(optimizer, "_synchronized"):
        optimizer._synchronized = False
    delay = getattr(optimizer, "_allreduce_delay", None)
    passes = getattr(optimizer, "backward_passes_per_step", None)
    if isinstance(delay, dict) and passes is not None:
        for p in delay:
            delay[p] = passes


class _ModuleHandler:
    def __init__(self, value):
        self.value = value
        self.saved = None

    def save(self):
        self.saved = copy.deepcopy(self.value.state_dict())

    def restore(self):
        if self.saved is not None:
            self.value.load_state_dict(self.saved)

    def sync(self):
        broadcast_parameters(self.value.state_dict(), root_rank=0)


class _OptimizerHandler(_ModuleHandler):
    def restore(self):
        _forget_pending_allreduces(self.value)
        super().restore()

    def sync(self):
        _forget_pending_allreduces(self.value)
        broadcast_optimizer_state(self.value, root_rank=0)


class _SamplerHandler(_ModuleHandler):
    def save(self):
        self.saved = self.value.state_dict()

    def sync(self):
        self.value.load_state_dict(broadcast_object(self.value.state_dict()))


def _handler_for(value):
    if isinstance(value, torch.nn.Module):
        return _ModuleHandler(value)
    if isinstance(value, torch.optim.Optimizer):
        return _OptimizerHandler(value)
    if isinstance(value, ElasticSampler):
        return _SamplerHandler(value)
    return None


class TorchState(ObjectState):
    """`TorchState(model, optimizer, epoch=0, batch=0, **more)`: see the module docstring.
    Attributes are reachable as state.model, state.optimizer, state.epoch..."""

    def __init__(self, model=None, optimizer=None, **kwargs):
        objects = dict(model=model, optimizer=optimizer, **kwargs)
        handlers = {}
        plain = {}
        for name, value in objects.items():
            handler = _handler_for(value)
            if handler is None:
                plain[name] = value
            else:
                handlers[name] = handler
        object.__setattr__(self, "_handlers", handlers)
        for name, handler in handlers.items():
            object.__setattr__(self, name, handler.value)
        super().__init__(bcast_object=broadcast_object, get_rank=basics.rank, **plain)
        self._save_objects()

    def __setattr__(self, name, value):
        handlers = self.__dict__.get("_handlers")
        if handlers is not None and name in handlers:
            handlers[name].value = value
        super().__setattr__(name, value)

    def _save_objects(self):
        for handler in self._handlers.values():
            handler.save()

    def save(self):
        self._save_objects()
        super().save()

    def restore(self):
        for handler in self._handlers.values():
            handler.restore()
        super().restore()

    def sync(self):
        # Same order on every rank: the keyword arguments' (model, optimizer, then the rest).
        for handler in self._handlers.values():
            handler.sync()
        super().sync()
        # The copies taken at the last commit follow the synced state (new ranks had none).
        self._save_objects()

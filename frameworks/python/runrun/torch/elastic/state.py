"""TorchState: a model, an optimizer, ElasticSamplers and plain attributes, committed and
restored together (Horovod's hvd.elastic.TorchState)."""

import copy

from runrun.common import basics
from runrun.elastic.state import ObjectState
from runrun.torch.elastic.sampler import ElasticSampler
from runrun.torch.functions import (broadcast_object, broadcast_optimizer_state,
                                    broadcast_parameters)


def _forget_pending_allreduces(optimizer):
    """A DistributedOptimizer whose step failed still holds the handles of that step; the
    next generation starts without them."""
    handles = getattr(optimizer, "_handles", None)
    if isinstance(handles, dict):
        handles.clear()
    if hasattr(optimizer, "_synchronized"):
        optimizer._synchronized = False
    delay = getattr(optimizer, "_allreduce_delay", None)
    passes = getattr(optimizer, "backward_passes_per_step", None)
    if isinstance(delay, dict) and passes is not None:
        for p in delay:
            delay[p] = passes


class TorchState(ObjectState):
    """`TorchState(model, optimizer, epoch=0, batch=0)`: save() copies the model's and the
    optimizer's state_dict (and every ElasticSampler's) in memory; restore() loads them back;
    sync() broadcasts them from rank 0. Other keyword arguments are plain attributes
    (ObjectState). Attributes are reachable as state.model, state.optimizer, state.epoch..."""

    def __init__(self, model=None, optimizer=None, **kwargs):
        self.model = model
        self.optimizer = optimizer
        self._samplers = {name: value for name, value in kwargs.items()
                          if isinstance(value, ElasticSampler)}
        plain = {name: value for name, value in kwargs.items() if name not in self._samplers}
        for name, sampler in self._samplers.items():
            setattr(self, name, sampler)
        super().__init__(bcast_object=broadcast_object, get_rank=basics.rank, **plain)
        self._saved_model = None
        self._saved_optimizer = None
        self._saved_samplers = {}
        self._save_objects()

    def _save_objects(self):
        if self.model is not None:
            self._saved_model = copy.deepcopy(self.model.state_dict())
        if self.optimizer is not None:
            self._saved_optimizer = copy.deepcopy(self.optimizer.state_dict())
        self._saved_samplers = {name: sampler.state_dict()
                                for name, sampler in self._samplers.items()}

    def save(self):
        self._save_objects()
        super().save()

    def restore(self):
        if self.model is not None and self._saved_model is not None:
            self.model.load_state_dict(self._saved_model)
        if self.optimizer is not None:
            _forget_pending_allreduces(self.optimizer)
            if self._saved_optimizer is not None:
                self.optimizer.load_state_dict(self._saved_optimizer)
        for name, sampler in self._samplers.items():
            sampler.load_state_dict(self._saved_samplers[name])
        super().restore()

    def sync(self):
        if self.model is not None:
            broadcast_parameters(self.model.state_dict(), root_rank=0)
        if self.optimizer is not None:
            _forget_pending_allreduces(self.optimizer)
            broadcast_optimizer_state(self.optimizer, root_rank=0)
        if self._samplers:
            states = broadcast_object({name: sampler.state_dict()
                                       for name, sampler in self._samplers.items()})
            for name, sampler in self._samplers.items():
                sampler.load_state_dict(states[name])
        super().sync()
        # The copies taken at the last commit follow the synced state (new ranks had none).
        self._save_objects()


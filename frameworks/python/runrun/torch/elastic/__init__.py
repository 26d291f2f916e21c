"""Elastic training for PyTorch (Horovod's `hvd.elastic`): `run`, `TorchState`,
`ElasticSampler`, and the neutral parts of runrun.elastic. docs/elastic.md."""

from runrun.elastic import HorovodInternalError, HostsUpdatedInterrupt, ObjectState, State
from runrun.elastic import run_fn as _run_fn
from runrun.torch.elastic.sampler import ElasticSampler
from runrun.torch.elastic.state import TorchState


def run(func):
    """Decorator: runs `func(state, ...)` again after every reset of the job (see
    runrun.elastic.run); the state is restored to its last commit after a failure."""
    return _run_fn(func)


__all__ = ["ElasticSampler", "HorovodInternalError", "HostsUpdatedInterrupt", "ObjectState",
           "State", "TorchState", "run"]

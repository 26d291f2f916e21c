"""Elastic training, framework-neutral part (docs/elastic.md): the state a script commits and
rolls back to, the `run` decorator that re-initializes runrun in a new generation of the job
after a failure or a change of hosts, and the exception that says the hosts changed. The
framework packages (runrun.torch.elastic, runrun.keras.elastic, runrun.jax.elastic) add their
state classes; names and behaviour follow Horovod's elastic API so scripts written for it run
unchanged."""

from runrun.common.exceptions import HorovodInternalError
from runrun.elastic.exceptions import HostsUpdatedInterrupt
from runrun.elastic.generations import is_elastic
from runrun.elastic.run import run_fn
from runrun.elastic.state import ObjectState, State

__all__ = ["HorovodInternalError", "HostsUpdatedInterrupt", "ObjectState", "State", "is_elastic",
           "run_fn"]

"""The interrupt elastic training raises besides HorovodInternalError (Horovod's names); the
class lives in runrun.common.exceptions, where Horovod's horovod.common.exceptions has it."""

from runrun.common.exceptions import HostsUpdatedInterrupt

__all__ = ["HostsUpdatedInterrupt"]

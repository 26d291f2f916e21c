"""Names of unnamed ops under runrun.torch's older path, taking the ProcessSet as they did: they
live in runrun.common.names (shared by every adapter), which takes the set's id."""

from runrun.common import names as _names
from runrun.common.process_sets import process_set_id


def op_name(op, name, process_set=None):
    """runrun.common.names.op_name for the set `process_set` (None: the global set)."""
    return _names.op_name(op, name, 0 if name is not None else process_set_id(process_set))


def group_names(op, name, count, process_set=None):
    """runrun.common.names.group_names for the set `process_set` (None: the global set)."""
    return _names.group_names(op, name, count,
                              0 if name is not None else process_set_id(process_set))

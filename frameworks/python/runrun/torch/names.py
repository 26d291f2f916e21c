"""Names of unnamed ops: moved to runrun.common.names (shared by every adapter); kept here for
code that imports it from runrun.torch."""

from runrun.common.names import group_names, op_name  # noqa: F401

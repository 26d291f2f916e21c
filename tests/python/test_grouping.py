"""runrun.common.grouping: Horovod's `groups` / `num_groups` read once for the torch, Keras and
TensorFlow optimizers and DistributedGradientTape (pure functions; the adapters' suites check
that training with groups gives the numbers of one process)."""

import warnings

import pytest

from runrun.common.exceptions import InvalidArgumentError
from runrun.common.grouping import group_positions, resolve_groups, split_evenly


def test_split_evenly_is_horovods_split_list():
    assert split_evenly(range(10), 4) == [[0, 1, 2], [3, 4, 5], [6, 7], [8, 9]]
    assert split_evenly(range(4), 3) == [[0, 1], [2], [3]]  # 3 groups, not ceil-sized 2
    assert split_evenly(range(2), 5) == [[0], [1]]  # no empty groups
    assert split_evenly(range(3), 0) == [[0, 1, 2]]


def test_group_positions_by_variable_lists_leaves_the_rest_alone():
    """Horovod: variables in one list are one group, every variable in no list a group of its
    own; matched by identity (Keras 3 names such as "kernel" repeat), in the given order."""
    a, b, c, d, e = (object() for _ in range(5))
    variables = [a, b, c, d, e]
    assert group_positions([0, 1, 2, 3, 4], variables, [[d, b], [e]]) == [[1, 3], [4], [0], [2]]
    # A gradient that is not being reduced (None, sparse, local) is in no group; an empty list
    # makes no group.
    assert group_positions([0, 2, 4], variables, [[b], [c, e]]) == [[2, 4], [0]]
    assert group_positions([0, 1, 2], variables, 2) == [[0, 1], [2]]


def test_resolve_groups_reads_num_groups_with_horovods_warning():
    with pytest.warns(DeprecationWarning, match="num_groups is deprecated") as caught:
        assert resolve_groups(3, None, "DistributedGradientTape", stacklevel=1) == 3
    assert caught[0].filename == __file__  # at the caller's line
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert resolve_groups(0, None, "X", stacklevel=1) == 0
        assert resolve_groups(0, ((1, 2), [3]), "X", stacklevel=1) == [[1, 2], [3]]
    with pytest.raises(InvalidArgumentError, match="DistributedGradientTape: groups must be >= 0"):
        resolve_groups(0, -1, "DistributedGradientTape", stacklevel=1)
    with pytest.raises(InvalidArgumentError, match="X: groups must be a number of groups or a "
                       "list of lists of variables, got str"):
        resolve_groups(0, "two", "X", stacklevel=1)
    with pytest.raises(InvalidArgumentError, match="got bool"):
        resolve_groups(0, True, "X", stacklevel=1)

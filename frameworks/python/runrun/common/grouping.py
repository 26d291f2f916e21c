"""How the DistributedOptimizers and DistributedGradientTape (torch, Keras, TensorFlow) read
Horovod's `groups` / `num_groups` arguments and split gradients into grouped allreduces, once
for every adapter. Thread-safety: pure functions.
"""

import warnings

from runrun.common.exceptions import InvalidArgumentError


def groups_from_num_groups(num_groups, groups, stacklevel):
    """`groups`, or Horovod's deprecated `num_groups` in its place (with Horovod's
    DeprecationWarning, attributed `stacklevel` frames up from the caller)."""
    if num_groups:
        warnings.warn("DistributedOptimizer: num_groups is deprecated (as in Horovod); use "
                      "groups=<number of groups>", DeprecationWarning, stacklevel=stacklevel + 1)
        if groups is None:
            groups = num_groups
    return groups


def resolve_groups(num_groups, groups, caller, stacklevel):
    """`groups` as the grouping helpers take it: 0 for none, a number of groups, or lists of
    variables; `num_groups` is its deprecated integer spelling (warned about `stacklevel`
    frames up from the caller). A wrong kind is an InvalidArgumentError naming `caller`."""
    groups = groups_from_num_groups(num_groups, groups, stacklevel=stacklevel + 1)
    if groups is None:
        return 0
    if isinstance(groups, int) and not isinstance(groups, bool):
        if groups < 0:
            raise InvalidArgumentError(f"{caller}: groups must be >= 0, got {groups}")
        return groups
    if not isinstance(groups, (list, tuple)) or not all(
            isinstance(g, (list, tuple)) for g in groups):
        raise InvalidArgumentError(
            f"{caller}: groups must be a number of groups or a list of lists of variables, got "
            f"{type(groups).__name__}")
    return [list(g) for g in groups]


def split_evenly(items, parts):
    """`items` in `parts` lists of near-equal length, the first ones one longer, empty ones
    left out (Horovod's split_list); `items` whole for `parts` of 1 or fewer."""
    items = list(items)
    if not parts or parts <= 1:
        return [items]
    base, extra = divmod(len(items), parts)
    bounds = [k * base + min(k, extra) for k in range(parts + 1)]
    return [items[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]


def group_positions(positions, variables, groups):
    """The grouped allreduces of one update, as lists of `positions` (indices into the gradient
    list, whose variables are `variables[i]`): for an integer `groups`, near-equal parts
    (split_evenly); for lists of variables, one group per list, matched by identity (Keras 3
    variable names are not unique), and every other gradient a group of its own, as Horovod
    ("a parameter that does not appear in any list will form a group itself")."""
    if not isinstance(groups, (list, tuple)):
        return split_evenly(positions, groups)
    group_of = {id(v): k for k, members in enumerate(groups) for v in members}
    listed = [[] for _ in groups]
    alone = []
    for i in positions:
        k = group_of.get(id(variables[i]))
        if k is None:
            alone.append([i])
        else:
            listed[k].append(i)
    return [group for group in listed if group] + alone

"""How the DistributedOptimizers (torch, Keras, TensorFlow) read Horovod's `groups` /
`num_groups` arguments and split gradients into a number of grouped allreduces, once for every
adapter. Thread-safety: pure functions.
"""

import warnings


def groups_from_num_groups(num_groups, groups, stacklevel):
    """`groups`, or Horovod's deprecated `num_groups` in its place (with Horovod's
    DeprecationWarning, attributed `stacklevel` frames up from the caller)."""
    if num_groups:
        warnings.warn("DistributedOptimizer: num_groups is deprecated (as in Horovod); use "
                      "groups=<number of groups>", DeprecationWarning, stacklevel=stacklevel + 1)
        if groups is None:
            groups = num_groups
    return groups


def split_evenly(items, parts):
    """`items` in `parts` lists of near-equal length, the first ones one longer, empty ones
    left out (Horovod's split_list); `items` whole for `parts` of 1 or fewer."""
    items = list(items)
    if not parts or parts <= 1:
        return [items]
    base, extra = divmod(len(items), parts)
    bounds = [k * base + min(k, extra) for k in range(parts + 1)]
    return [items[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]

"""scatter_dataset for torch: the root's dataset, split into equal shares, one per rank.

Why: ChainerMN's scatter_dataset; only the root needs the data on disk. The shares are planned
and pickled by runrun.common.data_shares (framework-neutral); here they travel as uint8 tensors
through alltoall, in rounds of at most `chunk_bytes` per rank, so no single message holds a whole
share and each rank receives only its own. Thread-safety: collective over `process_set`; call it
from one thread on every member, in the same order as other collectives.
"""

import torch

from runrun.common import basics
from runrun.common import data_shares as shares
from runrun.common.exceptions import InvalidArgumentError
from runrun.common.process_sets import global_process_set
from runrun.torch import collectives as c
from runrun.torch.functions import allgather_object, broadcast_object


def _detach_sample(sample):
    """A copy of `sample` whose tensors own their storage (a pickled view carries the whole
    storage it views, e.g. all of a TensorDataset's rows)."""
    if isinstance(sample, torch.Tensor):
        return sample.detach().clone()
    if isinstance(sample, tuple):
        return tuple(_detach_sample(s) for s in sample)
    if isinstance(sample, list):
        return [_detach_sample(s) for s in sample]
    if isinstance(sample, dict):
        return {k: _detach_sample(v) for k, v in sample.items()}
    return sample


def _check_arguments(root, chunk_bytes, process_set):
    if not process_set.included():
        raise InvalidArgumentError(
            f"scatter_dataset: rank {basics.rank()} is not a member of {process_set}; only its "
            "members call it")
    if root not in process_set.ranks:
        raise InvalidArgumentError(
            f"scatter_dataset: root={root} is not a member of {process_set} (root is a global "
            "rank)")
    if int(chunk_bytes) < 1:
        raise InvalidArgumentError(f"scatter_dataset: chunk_bytes must be >= 1, got {chunk_bytes}")


def _plan_on_root(dataset, process_set, shuffle, seed, drop_remainder, chunk_bytes):
    """(header, payloads): the lengths every rank needs, and each member's bytes."""
    try:
        plan = shares.plan_shares(len(dataset), len(process_set.ranks), shuffle, seed,
                                  drop_remainder)
        payloads = [shares.encode_share(dataset, idx, _detach_sample) for idx in plan]
    except InvalidArgumentError as e:
        return {"error": str(e)}, None
    except Exception as e:  # the user's dataset failed: every rank must hear of it
        return {"error": f"scatter_dataset: reading the root's dataset failed: "
                         f"{type(e).__name__}: {e}"}, None
    return {"error": None, "lengths": [len(p) for p in payloads], "total": len(dataset),
            "chunk_bytes": int(chunk_bytes)}, payloads


def _send_rounds(header, payloads, me, root_index, chunk_bytes, process_set):
    """This rank's bytes (empty on the root, which keeps its own share)."""
    lengths = list(header["lengths"])
    lengths[root_index] = 0  # the root's own share does not travel
    received = bytearray()
    for r in range(shares.round_count(lengths, chunk_bytes)):
        sizes = shares.round_sizes(lengths, chunk_bytes, r)
        if me == root_index:
            start = r * chunk_bytes
            parts = [torch.frombuffer(payloads[i], dtype=torch.uint8)[start:start + n]
                     for i, n in enumerate(sizes) if n]
            tensor = torch.cat(parts) if parts else torch.empty(0, dtype=torch.uint8)
            splits = sizes
        else:
            tensor = torch.empty(0, dtype=torch.uint8)
            splits = [0] * len(sizes)
        out, _ = c.alltoall_async(tensor, splits, name="scatter_dataset.chunk",
                                  process_set=process_set).wait()
        received.extend(out.numpy().tobytes())
    return received


def scatter_dataset(dataset, root=0, shuffle=False, seed=None, drop_remainder=False,
                    process_set=global_process_set, chunk_bytes=shares.DEFAULT_CHUNK_BYTES):
    """Collective. The root (a global rank in `process_set`) passes an indexable dataset with
    len(), every other member passes None; each member returns its ScatteredDataset share.
    Shares are equal: padded ChainerMN-style (neighbours may repeat a sample) or, with
    drop_remainder=True, the last len % size samples of the order are left out. shuffle=True
    deals a permutation fixed by `seed` (None: random). The root's shuffle, seed,
    drop_remainder and chunk_bytes apply; the other members' are ignored."""
    _check_arguments(root, chunk_bytes, process_set)
    me = basics.rank()
    is_root = me == root
    error = shares.check_root_input(dataset, is_root, root, me)
    errors = [e for e in allgather_object(error, "scatter_dataset.check", process_set) if e]
    if errors:
        raise InvalidArgumentError("scatter_dataset: " + "; ".join(errors))
    header, payloads = (_plan_on_root(dataset, process_set, shuffle, seed, drop_remainder,
                                      chunk_bytes) if is_root else (None, None))
    header = broadcast_object(header, root, "scatter_dataset.header", process_set)
    if header["error"]:
        raise InvalidArgumentError(header["error"])
    index = process_set.ranks.index(me)
    root_index = process_set.ranks.index(root)
    # The root's arguments decide (shuffle, seed, drop_remainder, chunk_bytes): every member
    # follows its header, so no two ranks can disagree on the rounds.
    received = _send_rounds(header, payloads, index, root_index, header["chunk_bytes"],
                            process_set)
    own = payloads[index] if is_root else received
    if len(own) != header["lengths"][index]:
        raise InvalidArgumentError(
            f"scatter_dataset: rank {me} received {len(own)} bytes of its share, expected "
            f"{header['lengths'][index]}")
    return shares.decode_share(own, header["total"])

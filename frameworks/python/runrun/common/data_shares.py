"""Framework-neutral half of scatter_dataset: which samples each rank gets, and the bytes.

Why: every adapter (runrun.torch today, Keras/JAX later) scatters a root's dataset the same way;
only the transport (the framework's alltoall) differs. Shares follow ChainerMN: with padding,
rank i of n gets ceil(N/n) consecutive samples starting at floor(N*i/n) of the (optionally
shuffled) order, so shares are equal and neighbours may share a sample; with drop_remainder,
each gets floor(N/n) and the last N % n samples of the order are left out.
Thread-safety: pure functions and an immutable view; no shared state.
"""

import pickle

import numpy as np

from runrun.common.exceptions import InvalidArgumentError

# Bytes one rank receives per round at most; rounds repeat until every share has arrived.
DEFAULT_CHUNK_BYTES = 64 * 1024 * 1024


def sample_order(count, shuffle, seed):
    """The order in which samples are dealt: 0..count-1, or a permutation fixed by `seed`."""
    if not shuffle:
        return np.arange(count, dtype=np.int64)
    return np.random.RandomState(seed).permutation(count).astype(np.int64)


def share_bounds(count, size, drop_remainder):
    """[(begin, end)] positions in the order for each of `size` ranks (equal lengths)."""
    if drop_remainder:
        if count < size:
            raise InvalidArgumentError(
                f"scatter_dataset: drop_remainder=True with {count} samples for {size} ranks "
                f"would give every rank an empty share; pass at least {size} samples or "
                "drop_remainder=False (padding)")
        per_rank = count // size
        return [(i * per_rank, (i + 1) * per_rank) for i in range(size)]
    if count == 0:
        raise InvalidArgumentError("scatter_dataset: the root's dataset is empty")
    per_rank = -(-count // size)
    return [(count * i // size, count * i // size + per_rank) for i in range(size)]


def plan_shares(count, size, shuffle=False, seed=None, drop_remainder=False):
    """For each rank of the set, the dataset indices of its share (numpy int64 arrays)."""
    order = sample_order(count, shuffle, seed)
    return [order[b:e] for b, e in share_bounds(count, size, drop_remainder)]


def check_root_input(dataset, is_root, root, rank):
    """An error message for this rank's argument, or None (collected on every rank so that all
    of them raise the same error instead of some waiting forever)."""
    if is_root:
        if dataset is None:
            return f"rank {rank} is the root ({root}) but passed dataset=None"
        try:
            len(dataset)
            dataset.__getitem__  # noqa: B018 (the indexable check)
        except (TypeError, AttributeError):
            return (f"rank {rank} (root) passed a {type(dataset).__name__}, which is not an "
                    "indexable dataset with len()")
        return None
    if dataset is not None:
        return (f"rank {rank} is not the root ({root}) but passed a dataset; only the root "
                "passes one, the other ranks pass None")
    return None


def encode_share(dataset, indices, prepare_sample=None):
    """The bytes of one share: its indices and the pickled list of its samples (each passed
    through `prepare_sample`, e.g. to copy a tensor view out of its large storage)."""
    prepare = prepare_sample or (lambda s: s)
    samples = [prepare(dataset[int(i)]) for i in indices]
    return bytearray(pickle.dumps((indices.tolist(), samples), protocol=pickle.HIGHEST_PROTOCOL))


def decode_share(payload, total):
    """The ScatteredDataset of bytes made by encode_share."""
    indices, samples = pickle.loads(payload)
    return ScatteredDataset(samples, indices, total)


def round_sizes(lengths, chunk_bytes, round_index):
    """Bytes of each share that travel in round `round_index` (every rank computes the same)."""
    start = round_index * chunk_bytes
    return [max(0, min(chunk_bytes, n - start)) for n in lengths]


def round_count(lengths, chunk_bytes):
    longest = max(lengths) if lengths else 0
    return -(-longest // chunk_bytes)


class ScatteredDataset:
    """This rank's share: indexable, with len(); `indices` are the positions of its samples in
    the root's dataset (equal on neighbours where padding repeated one)."""

    def __init__(self, samples, indices, total):
        self._samples = samples
        self.indices = [int(i) for i in indices]
        self.total = int(total)  # the root dataset's length

    def __len__(self):
        return len(self._samples)

    def __getitem__(self, i):
        return self._samples[i]

    def __iter__(self):
        return iter(self._samples)

    def __repr__(self):
        return f"ScatteredDataset({len(self)} of {self.total} samples)"

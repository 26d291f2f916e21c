"""scatter_dataset (issue 15, point 2): each rank's share, exactly, including a dataset sent in
many chunks, shuffling, drop_remainder, a process set, and errors raised on every rank."""

import pickle

import pytest
import torch


def padded_share(count, size, i):
    """ChainerMN's padding: ceil(count/size) consecutive positions from floor(count*i/size)."""
    begin = count * i // size
    return list(range(begin, begin + -(-count // size)))


@pytest.mark.parametrize("root_at", ["first", "last"])
def test_padded_shares_are_equal_and_exact(hvd, root_at):
    size, rank = hvd.size(), hvd.rank()
    root = 0 if root_at == "first" else size - 1
    count = 3 * size + 1  # not divisible: padding repeats samples on neighbours
    data = [f"sample-{i}" for i in range(count)] if rank == root else None
    share = hvd.scatter_dataset(data, root=root)
    expected = padded_share(count, size, rank)
    assert share.indices == expected
    assert list(share) == [f"sample-{i}" for i in expected]
    assert len(share) == -(-count // size) and share.total == count
    lengths = hvd.allgather_object(len(share), name=f"scatter.len.{root_at}")
    assert len(set(lengths)) == 1
    covered = set().union(*hvd.allgather_object(share.indices, name=f"scatter.cov.{root_at}"))
    assert covered == set(range(count))


def test_large_dataset_goes_in_chunks_and_arrives_exactly(hvd, monkeypatch):
    from runrun.torch import scatter

    size, rank = hvd.size(), hvd.rank()
    rows, chunk = 1001, 16 * 1024
    gen = torch.Generator().manual_seed(5)
    x, y = torch.randn(rows, 32, generator=gen), torch.arange(rows)
    dataset = torch.utils.data.TensorDataset(x, y)
    assert len(pickle.dumps([dataset[i] for i in range(rows // size)])) > 4 * chunk
    sent, received = [], []
    real = scatter.c.alltoall_async

    def counting(tensor, splits, **kwargs):
        sent.append(list(splits))
        handle = real(tensor, splits, **kwargs)
        return type("Counted", (), {"wait": lambda _self: received.append(
            handle.wait()) or received[-1]})()

    monkeypatch.setattr(scatter.c, "alltoall_async", counting)
    # The root's chunk_bytes applies on every rank (the others' differ here).
    share = hvd.scatter_dataset(dataset if rank == 0 else None,
                                chunk_bytes=chunk if rank == 0 else 3 * chunk + 1)
    monkeypatch.undo()
    assert len(sent) > 4  # many rounds, none larger than a chunk per rank
    assert all(max(splits) <= chunk for splits in sent)
    assert all(out.numel() <= chunk for out, _ in received)
    expected = padded_share(rows, size, rank)
    assert share.indices == expected
    for position, i in enumerate(expected):
        sx, sy = share[position]
        assert torch.equal(sx, x[i]) and int(sy) == i


def test_shuffle_is_a_fixed_permutation(hvd):
    size, rank = hvd.size(), hvd.rank()
    count = 8 * size
    data = list(range(count)) if rank == 0 else None
    first = hvd.scatter_dataset(data, shuffle=True, seed=3)
    again = hvd.scatter_dataset(data, shuffle=True, seed=3)
    assert list(first) == list(again) == first.indices
    assert len(first) == count // size
    shares = hvd.allgather_object(first.indices, name="scatter.shuffle")
    assert sorted(sum(shares, [])) == list(range(count))  # a partition
    assert sum(shares, []) != list(range(count))  # ...not in order


def test_drop_remainder_gives_disjoint_equal_shares(hvd):
    size, rank = hvd.size(), hvd.rank()
    count = 5 * size + size - 1
    share = hvd.scatter_dataset(list(range(count)) if rank == 0 else None, drop_remainder=True)
    assert list(share) == list(range(5 * rank, 5 * rank + 5))


def test_within_a_process_set(hvd):
    members = [r for r in range(hvd.size()) if r % 2 == 1]
    pset = hvd.add_process_set(members)
    try:
        if hvd.rank() in members:
            root = members[-1]
            count = 7
            data = list(range(100, 100 + count)) if hvd.rank() == root else None
            share = hvd.scatter_dataset(data, root=root, process_set=pset)
            index = members.index(hvd.rank())
            assert list(share) == [100 + i for i in padded_share(count, len(members), index)]
    finally:
        hvd.remove_process_set(pset)


def test_bad_input_raises_on_every_rank(hvd):
    rank = hvd.rank()
    with pytest.raises(hvd.InvalidArgumentError, match="root .* passed dataset=None"):
        hvd.scatter_dataset(None)
    with pytest.raises(hvd.InvalidArgumentError, match="rank 1 is not the root"):
        hvd.scatter_dataset([1, 2, 3] if rank in (0, 1) else None)
    with pytest.raises(hvd.InvalidArgumentError, match="drop_remainder=True with 1 samples"):
        hvd.scatter_dataset([1] if rank == 0 else None, drop_remainder=True)
    with pytest.raises(hvd.InvalidArgumentError, match="not an indexable dataset"):
        hvd.scatter_dataset(42 if rank == 0 else None)
    with pytest.raises(hvd.InvalidArgumentError, match="root=99 is not a member"):
        hvd.scatter_dataset(None, root=99)

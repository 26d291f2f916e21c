"""save_checkpoint / load_checkpoint (issue 15, point 4): one writer, atomic, topology recorded,
loaded on one rank and broadcast, resumed at a different number of ranks."""

import os

import pytest
import torch


def make_model(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.BatchNorm1d(6),
                               torch.nn.Linear(6, 2))


def trained(hvd, seed=1):
    """A model and DistributedOptimizer after two steps (momentum state, BN statistics)."""
    model = make_model(seed)
    opt = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.05 * hvd.size(),
                                                   momentum=0.9),
                                   named_parameters=model.named_parameters())
    hvd.broadcast_parameters(model.state_dict(), 0)
    for step in range(2):
        opt.zero_grad()
        x = torch.randn(5, 4, generator=torch.Generator().manual_seed(hvd.rank() + 10 * step))
        model(x).pow(2).mean().backward()
        opt.step()
    # BatchNorm statistics are per rank: the checkpoint holds rank 0's.
    hvd.broadcast_parameters(model.state_dict(), 0)
    return model, opt


def shared_dir(hvd, tmp_path, name):
    """A directory every rank of this host sees: rank 0's pytest tmp_path."""
    return hvd.broadcast_object(str(tmp_path), 0, name=f"ckpt.dir.{name}")


def same_state(a, b):
    return all(torch.equal(a.state_dict()[k], b.state_dict()[k]) for k in a.state_dict())


def test_save_then_resume_with_half_the_ranks(hvd, tmp_path):
    path = os.path.join(shared_dir(hvd, tmp_path, "half"), "ckpt.pt")
    model, opt = trained(hvd)
    assert hvd.save_checkpoint(path, model, opt, step=7, epoch=2) == path
    assert os.path.exists(path)
    assert [f for f in os.listdir(os.path.dirname(path)) if f.endswith(".tmp")] == []
    saved_lr = opt.param_groups[0]["lr"]
    members = list(range(max(1, hvd.size() // 2)))
    half = hvd.add_process_set(members)
    try:
        if hvd.rank() in members:
            fresh = make_model(seed=100 + hvd.rank())  # different on every rank
            fresh_opt = torch.optim.SGD(fresh.parameters(), lr=1.0, momentum=0.9)
            state = hvd.load_checkpoint(path, fresh, fresh_opt, process_set=half,
                                        rescale_lr=True)
            assert dict(state) == {"step": 7, "epoch": 2}
            assert state.saved_size == hvd.size() and state.size == len(members)
            assert state.size_changed == (len(members) != hvd.size())
            assert state.topology["process_set_ranks"] == list(range(hvd.size()))
            assert same_state(fresh, model)
            assert fresh_opt.param_groups[0]["lr"] == pytest.approx(
                saved_lr * len(members) / hvd.size())
            for p, q in zip(fresh.parameters(), model.parameters()):
                assert torch.equal(fresh_opt.state[p]["momentum_buffer"],
                                   opt.state[q]["momentum_buffer"])
    finally:
        hvd.remove_process_set(half)


def test_save_in_a_subset_resume_on_every_rank(hvd, tmp_path):
    path = os.path.join(shared_dir(hvd, tmp_path, "grow"), "sub.pt")
    members = list(range(max(1, hvd.size() // 2)))
    sub = hvd.add_process_set(members)
    model = make_model(seed=3)
    try:
        if hvd.rank() in members:
            hvd.save_checkpoint(path, model, None, root_rank=members[-1], process_set=sub, step=5)
    finally:
        hvd.remove_process_set(sub)
    fresh = make_model(seed=50 + hvd.rank())
    opt = torch.optim.SGD(fresh.parameters(), lr=0.1)
    state = hvd.load_checkpoint(path, fresh, root_rank=hvd.size() - 1)
    assert state["step"] == 5 and state.saved_size == len(members) and state.size == hvd.size()
    assert same_state(fresh, model)
    assert opt.param_groups[0]["lr"] == 0.1  # rescale_lr defaults to False


def test_missing_and_foreign_files_raise_on_every_rank(hvd, tmp_path):
    directory = shared_dir(hvd, tmp_path, "missing")
    model = make_model(seed=1)
    missing = os.path.join(directory, "nothing.pt")
    with pytest.raises(FileNotFoundError, match="rank 0 found no checkpoint"):
        hvd.load_checkpoint(missing, model)
    assert hvd.load_checkpoint(missing, model, missing_ok=True) is None
    foreign = os.path.join(directory, "foreign.pt")
    if hvd.rank() == 0:
        torch.save({"weights": 1}, foreign)
    hvd.barrier()
    with pytest.raises(RuntimeError, match="not a runrun checkpoint"):
        hvd.load_checkpoint(foreign, model)
    with pytest.raises(RuntimeError, match="could not write"):
        hvd.save_checkpoint(os.path.join(foreign, "under_a_file.pt"), model)


def test_double_buffered_optimizer_must_be_flushed(hvd, tmp_path):
    path = os.path.join(shared_dir(hvd, tmp_path, "flush"), "db.pt")
    model = make_model(seed=2)
    opt = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1),
                                   named_parameters=model.named_parameters(),
                                   double_buffering=True)
    model(torch.randn(3, 4)).sum().backward()
    opt.step()
    with pytest.raises(hvd.InvalidArgumentError, match="flush"):
        hvd.save_checkpoint(path, model, opt)
    opt.flush()
    hvd.save_checkpoint(path, model, opt)


def test_atomic_write_leaves_the_old_file_on_failure(tmp_path):
    from runrun.common.checkpoint_file import atomic_write

    path = tmp_path / "file.bin"
    atomic_write(path, lambda f: f.write(b"old"))

    def fail(f):
        f.write(b"half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        atomic_write(path, fail)
    assert path.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["file.bin"]

"""examples/pytorch/train_chainermn_style.py runs in-process on every rank (issue 15, point 5):
one epoch with a checkpoint, then a second run that resumes from it."""

import importlib.util
import os

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "pytorch",
                       "train_chainermn_style.py")


def load_example():
    spec = importlib.util.spec_from_file_location("train_chainermn_style", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_example_trains_evaluates_and_resumes(hvd, tmp_path, capsys):
    example = load_example()
    path = os.path.join(hvd.broadcast_object(str(tmp_path), 0, name="example.dir"), "ck.pt")
    args = ["--train-samples", "256", "--val-samples", "64", "--checkpoint", path]
    first = example.main(["--epochs", "1", *args])
    assert first["num_samples"] == 64 - 64 % hvd.size()
    assert 0.0 <= first["accuracy"] <= 1.0
    second = example.main(["--epochs", "2", *args])
    assert second["num_samples"] == first["num_samples"]
    if hvd.rank() == 0:
        out = capsys.readouterr().out
        assert f"resumed at epoch 1 (saved with {hvd.size()} ranks" in out
        assert "epoch 2: val loss" in out

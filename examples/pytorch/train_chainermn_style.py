"""Train with ChainerMN's conveniences on runrun: a scattered dataset, double buffering with
fp16 allreduce, multi-node evaluation and a checkpoint that resumes at any number of ranks.

Only rank 0 makes the (synthetic, deterministic) data; scatter_dataset gives every rank an equal
share. Run on 4 processes, then resume the same run on 2:
    runrun -np 4 python examples/pytorch/train_chainermn_style.py --epochs 2 --checkpoint /tmp/ck.pt
    runrun -np 2 python examples/pytorch/train_chainermn_style.py --epochs 4 --checkpoint /tmp/ck.pt
"""

import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

import runrun.torch as hvd


def synthetic_classification(num_samples, seed, features=20, classes=4):
    """A TensorDataset of (features, label): label = argmax of a fixed linear map + noise."""
    weights = torch.randn(features, classes, generator=torch.Generator().manual_seed(1234))
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(num_samples, features, generator=gen)
    y = (x @ weights + 0.1 * torch.randn(num_samples, classes, generator=gen)).argmax(1)
    return torch.utils.data.TensorDataset(x, y)


def make_model(features=20, classes=4):
    return nn.Sequential(nn.Linear(features, 64), nn.ReLU(), nn.Linear(64, classes))


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=4, help="train until this epoch")
    parser.add_argument("--batch-size", type=int, default=16, help="per process")
    parser.add_argument("--train-samples", type=int, default=2048)
    parser.add_argument("--val-samples", type=int, default=512)
    parser.add_argument("--lr", type=float, default=0.05, help="single-process learning rate")
    parser.add_argument("--checkpoint", default=None, help="save after every epoch, resume from")
    parser.add_argument("--no-double-buffering", action="store_true")
    parser.add_argument("--fp16-allreduce", action="store_true")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    hvd.init()
    torch.manual_seed(0)
    # 1. Only the root holds the data; each rank receives its equal share.
    root_data = hvd.rank() == 0
    train = hvd.scatter_dataset(synthetic_classification(args.train_samples, 1) if root_data
                                else None, shuffle=True, seed=0)
    val = hvd.scatter_dataset(synthetic_classification(args.val_samples, 2) if root_data
                              else None, drop_remainder=True)

    model = make_model()
    # 2. Double buffering: each step applies the previous step's averaged gradients.
    optimizer = hvd.DistributedOptimizer(
        torch.optim.SGD(model.parameters(), lr=args.lr * hvd.size(), momentum=0.9),
        named_parameters=model.named_parameters(),
        compression=hvd.Compression.fp16 if args.fp16_allreduce else hvd.Compression.none,
        double_buffering=not args.no_double_buffering)

    # 4. Resume: rank 0 reads the checkpoint and broadcasts it; the learning rate follows the
    # number of ranks (linear scaling).
    start_epoch = 0
    resumed = (hvd.load_checkpoint(args.checkpoint, model, optimizer, missing_ok=True,
                                   rescale_lr=True) if args.checkpoint else None)
    if resumed is None:
        hvd.broadcast_parameters(model.state_dict(), root_rank=0)
    else:
        start_epoch = resumed["epoch"]
        if hvd.rank() == 0:
            print(f"resumed at epoch {start_epoch} (saved with {resumed.saved_size} ranks, "
                  f"now {resumed.size}); lr {optimizer.param_groups[0]['lr']:g}", flush=True)

    metrics = None
    for epoch in range(start_epoch, args.epochs):
        model.train()
        loader = torch.utils.data.DataLoader(
            train, batch_size=args.batch_size, shuffle=True,
            generator=torch.Generator().manual_seed(epoch))
        for x, y in loader:
            optimizer.zero_grad()
            F.cross_entropy(model(x), y).backward()
            optimizer.step()
        optimizer.flush()  # the last step's gradients, before evaluating and saving
        # 3. Multi-node evaluation: metrics over every rank's validation samples.
        metrics = hvd.evaluate(
            model, torch.utils.data.DataLoader(val, batch_size=64),
            {"loss": F.cross_entropy, "correct": lambda out, y: (out.argmax(1) == y).sum()},
            sums=("correct",))
        metrics["accuracy"] = metrics["correct"] / metrics["num_samples"]
        if hvd.rank() == 0:
            print(f"epoch {epoch + 1}: val loss {metrics['loss']:.4f}, accuracy "
                  f"{metrics['accuracy']:.3f} over {metrics['num_samples']} samples", flush=True)
        if args.checkpoint:
            hvd.save_checkpoint(args.checkpoint, model, optimizer, epoch=epoch + 1)
    return metrics


if __name__ == "__main__":
    main()

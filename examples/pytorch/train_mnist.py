"""Train a small CNN on MNIST-shaped data with runrun (Horovod's PyTorch MNIST example).

The data is generated here, deterministically (nothing is downloaded): ten fixed 28x28 class
patterns plus noise, so the loss visibly falls within a few epochs. Run on 4 processes with
    runrun -np 4 python examples/pytorch/train_mnist.py
or  mpirun -np 4 python examples/pytorch/train_mnist.py
A Horovod script differs only in its import line: `import horovod.torch as hvd`.
"""

import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

import runrun.torch as hvd
from runrun.torch.callbacks import (
    BroadcastGlobalVariablesCallback,
    CallbackList,
    LearningRateWarmupCallback,
    MetricAverageCallback,
)


def synthetic_mnist(num_samples, seed):
    """(images [N, 1, 28, 28], labels [N]): class patterns + Gaussian noise, fixed by `seed`."""
    patterns = torch.randn(10, 1, 28, 28, generator=torch.Generator().manual_seed(1234))
    gen = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, 10, (num_samples,), generator=gen)
    noise = torch.randn(num_samples, 1, 28, 28, generator=gen)
    return patterns[labels] * 0.6 + noise, labels


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2(x), 2))
        x = F.relu(self.fc1(x.flatten(1)))
        return F.log_softmax(self.fc2(x), dim=1)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=32, help="per process")
    parser.add_argument("--train-samples", type=int, default=4096)
    parser.add_argument("--test-samples", type=int, default=1024)
    parser.add_argument("--lr", type=float, default=0.01, help="single-process learning rate")
    parser.add_argument("--momentum", type=float, default=0.5)
    parser.add_argument("--fp16-allreduce", action="store_true")
    parser.add_argument("--seed", type=int, default=42)
    return parser.parse_args()


def evaluate(model, images, labels):
    model.eval()
    with torch.no_grad():
        output = model(images)
        loss = F.nll_loss(output, labels, reduction="sum").item()
        correct = (output.argmax(1) == labels).sum().item()
    model.train()
    # Sum over ranks: every rank evaluated its own shard.
    totals = hvd.allreduce(torch.tensor([loss, correct, len(labels)], dtype=torch.float64),
                           op=hvd.Sum, name="eval_totals")
    return totals[0].item() / totals[2].item(), totals[1].item() / totals[2].item()


def main():
    args = parse_args()
    hvd.init()
    torch.manual_seed(args.seed + hvd.rank())  # different init per rank: the broadcast fixes it
    torch.set_num_threads(1)

    images, labels = synthetic_mnist(args.train_samples, seed=args.seed)
    test_images, test_labels = synthetic_mnist(args.test_samples, seed=args.seed + 1)
    # Each rank trains on its own shard (as DistributedSampler would).
    shard = slice(hvd.rank(), None, hvd.size())
    images, labels = images[shard], labels[shard]
    test_images, test_labels = test_images[shard], test_labels[shard]

    model = Net()
    # Scale the learning rate by the number of processes (the global batch grows with it).
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr * hvd.size(),
                                momentum=args.momentum)
    compression = hvd.Compression.fp16 if args.fp16_allreduce else hvd.Compression.none
    optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters(),
                                         compression=compression)
    steps_per_epoch = len(labels) // args.batch_size
    callbacks = CallbackList([
        BroadcastGlobalVariablesCallback(root_rank=0),
        MetricAverageCallback(),
        LearningRateWarmupCallback(warmup_epochs=1, steps_per_epoch=steps_per_epoch),
    ])
    callbacks.on_train_begin(model, optimizer)

    for epoch in range(args.epochs):
        callbacks.on_epoch_begin(epoch)
        order = torch.randperm(len(labels), generator=torch.Generator().manual_seed(epoch))
        total = 0.0
        for batch in range(steps_per_epoch):
            callbacks.on_batch_begin(batch)
            idx = order[batch * args.batch_size:(batch + 1) * args.batch_size]
            optimizer.zero_grad()
            loss = F.nll_loss(model(images[idx]), labels[idx])
            loss.backward()
            optimizer.step()
            total += loss.item()
            callbacks.on_batch_end(batch)
        logs = callbacks.on_epoch_end(epoch, {"train_loss": total / steps_per_epoch})
        test_loss, accuracy = evaluate(model, test_images, test_labels)
        if hvd.rank() == 0:
            print(f"epoch {epoch + 1}/{args.epochs}: train loss {logs['train_loss']:.4f}  "
                  f"test loss {test_loss:.4f}  test accuracy {100 * accuracy:.1f}%  "
                  f"({hvd.size()} processes)", flush=True)
    hvd.shutdown()


if __name__ == "__main__":
    main()

"""Elastic training with runrun (Horovod's pytorch_mnist_elastic.py, on synthetic data so it
needs no download). Kill a worker, or add a host to the discovery script's output, while it
runs: the job goes on at the new size from the last commit. docs/elastic.md.

    runrun -np 4 --min-np 2 -H localhost:4 python examples/pytorch/elastic_mnist_like.py
    runrun -np 2 --min-np 2 --max-np 4 --host-discovery-script ./discover_hosts.sh \
        python examples/pytorch/elastic_mnist_like.py
"""

import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

import runrun.torch as hvd

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--lr", type=float, default=0.01)
parser.add_argument("--samples", type=int, default=4096)
parser.add_argument("--commit-every", type=int, default=10, help="batches between commits")
args = parser.parse_args()

hvd.init()
torch.manual_seed(42)
images = torch.randn(args.samples, 1, 28, 28)
labels = torch.randint(0, 10, (args.samples,))
dataset = TensorDataset(images, labels)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 5)
        self.fc = nn.Linear(8 * 12 * 12, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv(x)), 2)
        return self.fc(x.flatten(1))


model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr * hvd.size(), momentum=0.9)
optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters())
sampler = hvd.elastic.ElasticSampler(dataset, shuffle=True)
state = hvd.elastic.TorchState(model, optimizer, sampler=sampler, epoch=0)


def on_reset():
    # The learning rate follows the size of the new generation.
    for group in optimizer.param_groups:
        group["lr"] = args.lr * hvd.size()
    if hvd.rank() == 0:
        print(f"reset: now {hvd.size()} ranks, resuming epoch {state.epoch}", flush=True)


state.register_reset_callbacks([on_reset])


@hvd.elastic.run
def train(state):
    for state.epoch in range(state.epoch, args.epochs):
        # After a reset the sampler yields only the indices not processed yet in this epoch,
        # split over the new number of ranks; batch numbers restart at 0.
        loader = DataLoader(dataset, batch_size=args.batch_size, sampler=state.sampler)
        for batch, (data, target) in enumerate(loader):
            optimizer.zero_grad()
            loss = F.cross_entropy(state.model(data), target)
            loss.backward()
            optimizer.step()
            state.sampler.record_batch(batch, args.batch_size)
            if batch % args.commit_every == 0:
                if hvd.rank() == 0:
                    print(f"epoch {state.epoch} batch {batch} loss {loss.item():.4f} "
                          f"size {hvd.size()}", flush=True)
                state.commit()
        # The sampler never repeats an index: at the end of an epoch a rank may have one
        # (one-sample) batch more than others; join() lets them take part in its allreduces.
        hvd.join()
        state.sampler.set_epoch(state.epoch + 1)
        state.commit()


train(state)
if hvd.rank() == 0:
    print("done", flush=True)

"""ElasticSampler: a DistributedSampler that survives resets (Horovod's
hvd.elastic.ElasticSampler). Within an epoch, the indices already processed (recorded with
record_batch / record_indices and committed with the state) are never seen again after a
reset, and the remaining ones are split again over the new number of ranks: no index is lost
or seen twice within the epoch.

Unlike Horovod's (and torch's DistributedSampler without drop_last), the last round of an epoch
is not padded with repeated indices: when the indices left are not a multiple of the number of
ranks, the first ranks get one index more than the others (the shares differ by at most one).
"""

import torch
from torch.utils.data.sampler import Sampler

from runrun.common import basics


class ElasticSampler(Sampler):
    def __init__(self, dataset, shuffle=True, seed=0):
        self.dataset = dataset
        self.shuffle = shuffle
        self.seed = seed
        self.epoch = 0
        self.processed_indices = set()
        self.num_replicas = 1
        self.rank = 0
        self.remaining_indices = []
        self.num_samples = 0
        self.reset()

    def set_epoch(self, epoch):
        """Starts epoch `epoch`: nothing processed yet, a new shuffle."""
        self.epoch = epoch
        self.processed_indices = set()
        self.reset()

    def _share(self, rank):
        """The indices rank `rank` of the current generation processes, in order."""
        return self.remaining_indices[rank::self.num_replicas]

    def record_batch(self, batch_idx, batch_size):
        """Marks the `batch_idx`-th batch of `batch_size` of every rank's share as processed
        (each rank records the same batch positions, so every rank records the same indices)."""
        start = batch_idx * batch_size
        for rank in range(self.num_replicas):
            self.processed_indices.update(self._share(rank)[start:start + batch_size])

    def record_indices(self, indices):
        """Marks these dataset indices as processed. Every rank must record the same ones (e.g.
        the union of every rank's batch, gathered) for the state to agree across ranks."""
        self.processed_indices.update(int(i) for i in indices)

    def state_dict(self):
        return {"epoch": self.epoch, "processed_indices": sorted(self.processed_indices)}

    def load_state_dict(self, state_dict):
        self.epoch = state_dict["epoch"]
        self.processed_indices = set(state_dict["processed_indices"])
        self.reset()

    def reset(self):
        """Splits the indices not processed yet over the ranks of the current generation."""
        self.num_replicas = basics.size() if basics.is_initialized() else 1
        self.rank = basics.rank() if basics.is_initialized() else 0
        indices = list(range(len(self.dataset)))
        if self.shuffle:
            generator = torch.Generator()
            generator.manual_seed(self.seed + self.epoch)
            indices = [indices[i] for i in torch.randperm(len(indices), generator=generator)]
        self.remaining_indices = [i for i in indices if i not in self.processed_indices]
        self.num_samples = len(self._share(self.rank))

    def __iter__(self):
        return iter(self._share(self.rank))

    def __len__(self):
        return self.num_samples

"""ElasticSampler across resets, without processes (ctest elastic.sampler): 4 ranks process a
few batches and commit (record_batch), one more batch is lost (rolled back), the job continues
with 3 ranks, records a few batches by dataset index (record_indices, the union of every rank's
batch as an allgather would give it) and commits, loses another batch, and finishes the epoch
with 2 ranks. Every index of the dataset is seen exactly once in what was committed plus the
last generation's pass (nothing lost, nothing seen twice: no padding either), each generation's
shares are disjoint and differ by at most one index, and ranks agree on the committed state.
Usage: PYTHONPATH=... python sampler_check.py"""
import sys

from runrun.common import basics
from runrun.torch.elastic.sampler import ElasticSampler

N, BATCH = 103, 4
current = {"size": 4, "rank": 0}
basics.is_initialized = lambda: True
basics.size = lambda: current["size"]
basics.rank = lambda: current["rank"]


def samplers(size, state=None):
    current["size"] = size
    out = []
    for rank in range(size):
        current["rank"] = rank
        sampler = ElasticSampler(list(range(N)), shuffle=True, seed=3)
        if state is not None:
            sampler.load_state_dict(state)
        out.append(sampler)
    return out


def shares_of(group):
    shares = [list(iter(s)) for s in group]
    flat = [i for share in shares for i in share]
    assert len(flat) == len(set(flat)), "two ranks of one generation share an index"
    assert max(map(len, shares)) - min(map(len, shares)) <= 1, "shares differ by more than one"
    assert all(len(share) == len(s) for share, s in zip(shares, group)), "len() is not the share"
    return shares


def committed_state(group):
    state = group[0].state_dict()
    assert all(s.state_dict() == state for s in group), "ranks recorded different indices"
    return state


seen = []  # what the committed work processed, plus the last pass
group = samplers(4)
shares = shares_of(group)
for batch in range(5):  # 5 batches processed and committed
    for rank, sampler in enumerate(group):
        seen += shares[rank][batch * BATCH:(batch + 1) * BATCH]
        sampler.record_batch(batch, BATCH)
committed = committed_state(group)
# batch 5 runs on every rank but the job fails before the commit: rolled back, not recorded.

group = samplers(3, committed)
shares = shares_of(group)
assert set(i for s in shares for i in s).isdisjoint(committed["processed_indices"]), \
    "committed indices are given out again"
for batch in range(3):  # recorded by dataset index: every rank records every rank's batch
    processed = [i for share in shares for i in share[batch * BATCH:(batch + 1) * BATCH]]
    seen += processed
    for sampler in group:
        sampler.record_indices(processed)
committed = committed_state(group)
# another batch is lost before its commit.

group = samplers(2, committed)
shares = shares_of(group)
for share in shares:
    seen += share
missing = set(range(N)) - set(seen)
assert not missing, f"indices never seen in the epoch: {sorted(missing)}"
twice = sorted(i for i in set(seen) if seen.count(i) > 1)
assert not twice, f"indices seen twice in the epoch: {twice}"
assert len(seen) == N
# The next epoch starts from the whole dataset again.
for rank, sampler in enumerate(group):
    current["rank"] = rank
    sampler.set_epoch(1)
assert sorted(i for s in shares_of(group) for i in s) == list(range(N))
print("PASS: every index once across two resets")
sys.exit(0)

"""ElasticSampler across a reset, without processes (ctest elastic.sampler): 4 ranks process a
few batches and commit, one more batch is lost (rolled back), the job continues with 3 ranks to
the end of the epoch. Every index of the dataset is seen; none twice except the padding of each
round (at most size-1 per round), and the rolled-back batch is redone. Usage: PYTHONPATH=...
python sampler_check.py"""
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


seen = []
group = samplers(4)
iters = [list(iter(s)) for s in group]
for batch in range(5):  # 5 batches processed and committed
    for rank, sampler in enumerate(group):
        seen += iters[rank][batch * BATCH:(batch + 1) * BATCH]
        sampler.record_batch(batch, BATCH)
committed = group[0].state_dict()
assert all(s.state_dict() == committed for s in group), "ranks recorded different indices"
# batch 5 runs on every rank but the job fails before the commit: rolled back, not recorded.
group = samplers(3, committed)
iters = [list(iter(s)) for s in group]
assert all(len(it) == len(iters[0]) for it in iters)
for rank in range(3):
    seen += iters[rank]
missing = set(range(N)) - set(seen)
assert not missing, f"indices never seen: {sorted(missing)}"
duplicates = len(seen) - len(set(seen))
assert duplicates <= 3 + 2, f"{duplicates} indices seen twice (more than the padding)"
assert set(iters[0]).isdisjoint(committed["processed_indices"]), "committed indices seen again"
print("PASS", duplicates, "padding duplicates")
sys.exit(0)

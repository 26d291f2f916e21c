"""Where RayExecutor's workers go: one placement group, as Horovod's two strategies.

Why: a runrun job needs all its ranks at once (gang scheduling) and ranks that share a node
share a host in runrun's topology (local and cross ranks). A placement group reserves every
worker's resources atomically before any actor starts:
- num_hosts/num_workers_per_host (Horovod's ColocatedStrategy): one bundle per host holding its
  W workers, STRICT_SPREAD (each bundle on another node);
- num_workers (Horovod's PGStrategy): one bundle per worker, PACK (filled node by node, so
  workers of one node get neighbouring ranks), or the settings' placement_group_strategy.
Thread-safety: driver only, one executor at a time per object.
"""

import ray
from ray.util.placement_group import placement_group, remove_placement_group
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy


class Placement:
    """The placement group and the scheduling strategy of each worker (in worker order)."""

    def __init__(self, *, num_workers, num_hosts, num_workers_per_host, cpus_per_worker,
                 gpus_per_worker, strategy, timeout_s):
        per_worker = {"CPU": cpus_per_worker}
        if gpus_per_worker:
            per_worker["GPU"] = gpus_per_worker
        if num_hosts is not None:
            bundles = [{k: v * num_workers_per_host for k, v in per_worker.items()}
                       for _ in range(num_hosts)]
            self.bundle_of_worker = [h for h in range(num_hosts)
                                     for _ in range(num_workers_per_host)]
            strategy = "STRICT_SPREAD"
        else:
            bundles = [dict(per_worker) for _ in range(num_workers)]
            self.bundle_of_worker = list(range(num_workers))
        self.bundles = bundles
        self.strategy = strategy
        self.group = placement_group(bundles, strategy=strategy)
        ready, _ = ray.wait([self.group.ready()], timeout=timeout_s)
        if not ready:
            wanted = _total(bundles)
            free = ray.available_resources()
            remove_placement_group(self.group)
            self.group = None
            raise TimeoutError(
                f"runrun.ray: the placement group of {len(bundles)} bundles ({wanted} in all, "
                f"strategy {strategy}) was not ready within {timeout_s} s; the cluster has "
                f"{ {k: free.get(k, 0) for k in wanted} } free (set placement_group_timeout_s "
                "in create_settings, or ask for fewer workers or resources)")

    def scheduling(self, worker):
        return PlacementGroupSchedulingStrategy(
            placement_group=self.group,
            placement_group_bundle_index=self.bundle_of_worker[worker])

    def remove(self):
        if self.group is not None:
            remove_placement_group(self.group)
            self.group = None


def _total(bundles):
    total = {}
    for bundle in bundles:
        for key, value in bundle.items():
            total[key] = total.get(key, 0) + value
    return total

"""The hosts of an elastic RayExecutor job: the Ray nodes, their slots, their cooldowns.

Why: the launcher's elastic driver learns its hosts from a discovery script and keeps a table of
them (launcher/elastic/elastic_hosts.h: stable host indices, cooldowns after failures, where new
workers
go); on Ray the discovery is `ray.nodes()` (Horovod's RayHostDiscovery): every alive node is a
host whose slots are its CPUs (GPUs) divided by cpus_per_worker (gpus_per_worker). A node's
index is the order it was first seen, and stays. Thread-safety: driver only.
"""

import time

import ray


def discover(cpus_per_worker, gpus_per_worker):
    """{node_id: (address, slots)} of the alive nodes with at least one slot."""
    found = {}
    for node in ray.nodes():
        if not node.get("Alive"):
            continue
        resources = node.get("Resources", {})
        slots = int(resources.get("CPU", 0) // cpus_per_worker) if cpus_per_worker else None
        if gpus_per_worker:
            by_gpu = int(resources.get("GPU", 0) // gpus_per_worker)
            slots = by_gpu if slots is None else min(slots, by_gpu)
        if slots:
            found[node["NodeID"]] = (node["NodeManagerAddress"], slots)
    return found


class HostTable:
    """The nodes seen so far (index, address, slots now, cooldown)."""

    def __init__(self, cooldown_range):
        self.cooldown_min, self.cooldown_max = cooldown_range
        self.index = {}      # node_id -> host index (first seen order)
        self.address = {}    # node_id -> address
        self.slots = {}      # node_id -> slots; only the nodes alive in the last discovery
        self._cooldown_until = {}
        self._last_cooldown = {}

    def update(self, found):
        """Takes a discovery; True when the set of nodes or their slots changed."""
        changed = {k: v[1] for k, v in found.items()} != self.slots
        for node_id, (address, slots) in found.items():
            self.index.setdefault(node_id, len(self.index))
            self.address[node_id] = address
        self.slots = {k: v[1] for k, v in found.items()}
        return changed

    def alive(self, node_id):
        return node_id in self.slots

    def name(self, node_id):
        return f"{self.address.get(node_id, '?')} (Ray node {node_id[:12]})"

    def record_failure(self, node_id, now=None):
        """A worker failed on the node: no new worker there for a cooldown (min, doubled at each
        later failure, at most max; a failure during the cooldown does not count again).
        Returns the cooldown in seconds."""
        now = time.monotonic() if now is None else now
        if self._cooldown_until.get(node_id, 0) > now:
            return self._cooldown_until[node_id] - now
        last = self._last_cooldown.get(node_id)
        length = self.cooldown_min if last is None else min(max(last * 2, self.cooldown_min),
                                                             self.cooldown_max)
        self._last_cooldown[node_id] = length
        self._cooldown_until[node_id] = now + length
        return length

    def cooling(self, node_id, now=None):
        now = time.monotonic() if now is None else now
        return self._cooldown_until.get(node_id, 0) > now

    def cooldown_ends(self):
        """When the next cooldown ends (monotonic), or None."""
        now = time.monotonic()
        ends = [t for t in self._cooldown_until.values() if t > now]
        return min(ends) if ends else None

    def free_slots(self, running_per_node, now=None):
        """[(node_id, free slots)] of the alive nodes not cooling down, in host-index order."""
        out = []
        for node_id in sorted(self.slots, key=lambda n: self.index[n]):
            if self.cooling(node_id, now):
                continue
            free = self.slots[node_id] - running_per_node.get(node_id, 0)
            if free > 0:
                out.append((node_id, free))
        return out

"""An elastic RayExecutor (min_workers/max_workers; docs/ray.md, "Elastic") on the two-node Ray
cluster of netns_ray_cluster.py: one worker per node (cpus_per_worker = a node's CPUs) trains
with hvd.elastic.run and a TorchState, committing every step; at step KILL_AT the worker on the
second node stops there and the test kills that node's raylet (the node is lost: its `ray start`
and every process of it end). The driver publishes a generation without it and training goes
on at size 1 from the last commit, so the run ends with what that schedule of sizes predicts,
exactly: `total` (the sum of the size at every committed step) is 2 * KILL_AT + (STEPS -
KILL_AT), and the weights are those of STEPS plain steps in one process (every rank trains on
the same batch, so the averaged gradient does not depend on the size). Afterwards nothing is
left: no actor, nothing in the lost node's namespace, and after `ray stop` nothing in the
other's. The head's GCS checks the nodes every second (RAY_health_check_*), so that Ray counts
the lost node dead within seconds, not the default ~30 s."""

import os
import tempfile
import threading
import time

import pytest
import ray

from netns_ray_cluster import NamespaceRayCluster, NotPermitted
from runrun.ray import RayExecutor
from test_ray_two_nodes import _connect, _lines

STEPS = 12
KILL_AT = 5
CPUS_PER_NODE = 2
FAST_HEALTH_CHECKS = {"RAY_health_check_initial_delay_ms": "1000",
                      "RAY_health_check_period_ms": "1000",
                      "RAY_health_check_timeout_ms": "2000",
                      "RAY_health_check_failure_threshold": "4"}


@pytest.fixture(scope="module")
def cluster():
    nodes = NamespaceRayCluster(cpus_per_node=CPUS_PER_NODE, extra_env=FAST_HEALTH_CHECKS)
    try:
        try:
            nodes.start()
        except NotPermitted as reason:
            pytest.skip(f"cannot make network-namespace hosts here: {reason}")
        restore_auth = nodes.authenticate_this_process()
        try:
            _connect(nodes)
            yield nodes
        finally:
            ray.shutdown()
            restore_auth()
    finally:
        nodes.cleanup()


def make_model():
    import torch

    torch.manual_seed(1234)
    return torch.nn.Linear(4, 1).double()


def train_step(model, optimizer):
    import torch

    generator = torch.Generator().manual_seed(7)
    data = torch.randn(8, 4, generator=generator, dtype=torch.double)
    target = torch.randn(8, 1, generator=generator, dtype=torch.double)
    optimizer.zero_grad()
    torch.nn.functional.mse_loss(model(data), target).backward()
    optimizer.step()


def one_process_weights():
    import torch

    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for _ in range(STEPS):
        train_step(model, optimizer)
    return torch.cat([p.detach().flatten() for p in model.parameters()]).tolist()


def elastic_train(lost_node_address, ready_file):
    """One worker: hvd.elastic.run over a TorchState; the worker on the node to be lost marks
    `ready_file` at step KILL_AT and waits there for its node's end."""
    import torch

    import runrun.torch as hvd

    hvd.init()
    model = make_model()
    optimizer = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9),
                                         named_parameters=model.named_parameters())
    state = hvd.elastic.TorchState(model, optimizer, step=0, total=0)
    resets = []
    state.register_reset_callbacks([lambda: resets.append(hvd.size())])
    on_lost_node = ray.util.get_node_ip_address() == lost_node_address

    @hvd.elastic.run
    def train(state):
        while state.step < STEPS:
            if on_lost_node and state.step == KILL_AT:
                open(ready_file, "w").close()
                time.sleep(300)  # the test kills this node's raylet meanwhile
            train_step(state.model, state.optimizer)
            size = hvd.allreduce(torch.tensor([1.0]), op=hvd.Sum, name="size").item()
            state.total += int(size)
            state.step += 1
            state.commit()

    train(state)
    weights = torch.cat([p.detach().flatten() for p in state.model.parameters()]).tolist()
    result = (hvd.rank(), hvd.size(), state.step, state.total, resets, weights,
              ray.util.get_node_ip_address())
    hvd.shutdown()
    return result


def test_a_lost_node_leaves_training_at_the_smaller_size_from_the_last_commit(cluster):
    ready = os.path.join(tempfile.mkdtemp(prefix="runrun_ray_elastic."), "at-kill-step")
    executor = RayExecutor(RayExecutor.create_settings(timeout_s=60), min_workers=1,
                           max_workers=2, cpus_per_worker=CPUS_PER_NODE, elastic_timeout=60)
    started = time.monotonic()
    executor.start()
    ids = [w.actor._actor_id.hex() for w in executor._elastic_driver.workers.values()]
    assert len(ids) == 2, "one worker per node"
    try:
        refs = {}

        def run():
            refs["results"] = executor.run(elastic_train,
                                           args=[cluster.node_addresses[1], ready])
            refs["generations"] = executor._elastic_driver.generation

        runner = threading.Thread(target=run)
        runner.start()
        deadline = time.monotonic() + 120
        while not os.path.exists(ready):
            assert runner.is_alive() and time.monotonic() < deadline, \
                "the second node's worker never reached the kill step"
            time.sleep(0.1)
        cluster.kill_raylet(2)
        runner.join(timeout=150)
        assert not runner.is_alive(), "the elastic run did not end"
    finally:
        executor.shutdown()
    results = refs["results"]
    took = time.monotonic() - started
    print(f"elastic run: {took:.1f} s, {refs['generations']} generations")

    # The last generation: the head node's worker alone, at size 1, trained to the end.
    assert len(results) == 1, results
    rank, size, steps, total, resets, weights, address = results[0]
    assert (rank, size, steps, address) == (0, 1, STEPS, cluster.node_addresses[0])
    assert total == 2 * KILL_AT + (STEPS - KILL_AT), (total, "sizes of the committed steps")
    assert resets == [1]
    reference = one_process_weights()
    assert max(abs(a - b) for a, b in zip(weights, reference)) < 1e-9, (weights, reference)
    assert took < 150

    # Nothing left: every actor of the job dead, the lost node's namespace empty, and after
    # `ray stop` on the head node nothing there either.
    deadline = time.monotonic() + 60
    while True:
        states = {a: ray._private.state.actors(a)["State"] for a in ids}
        if all(s == "DEAD" for s in states.values()) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert all(s == "DEAD" for s in states.values()), states
    assert cluster.wait_until_empty(2) == {}
    ray.shutdown()
    left_by_ray_stop, left_at_all = cluster.stop()
    assert left_by_ray_stop == {}, f"left after `ray stop`:\n{_lines(left_by_ray_stop)}"
    assert left_at_all == {}, f"left after `ray start --block` ended:\n{_lines(left_at_all)}"

"""An elastic RayExecutor (min_workers/max_workers; docs/ray.md, "Elastic") on the two-node Ray
cluster of netns_ray_cluster.py: one worker per node (cpus_per_worker = a node's CPUs) trains
with hvd.elastic.run and a TorchState, committing every step. At step KILL_AT the worker on the
second node stops there and the test kills that node's raylet (the node is lost: its `ray start`
and every process of it end). The driver publishes a generation without it and training goes
on at size 1 from the last commit; once a step at size 1 is committed, the test starts a new Ray
node in the second host (a machine that came back), the driver starts a worker there, which
joins at the next commit, and training ends at size 2 (the loop runs at least STEPS steps and
ends on a step at size 2). The schedule of sizes the ranks committed is then exactly
[2] * KILL_AT + [1] * k + [2] * m (k, m >= 1: no step lost or done twice across both resets),
the sum kept in the state equals it, and the weights are those of as many plain steps in one
process (every rank trains on the same batch, so the averaged gradient does not depend on the
size). Nothing is left: the lost node's namespace empties before the new node starts, and after
the job no actor lives and `ray stop` leaves nothing in either host. The head's GCS checks the
nodes every second (RAY_health_check_*), so that Ray counts the lost node dead within seconds,
not the default ~30 s."""

import os
import tempfile
import threading
import time

import pytest
import ray
from netns_ray_cluster import NotPermitted, driver_session
from test_ray_two_nodes import _lines

from runrun.ray import RayExecutor

STEPS = 12
KILL_AT = 5
CPUS_PER_NODE = 2
FAST_HEALTH_CHECKS = {"RAY_health_check_initial_delay_ms": "1000",
                      "RAY_health_check_period_ms": "1000",
                      "RAY_health_check_timeout_ms": "2000",
                      "RAY_health_check_failure_threshold": "4"}


@pytest.fixture(scope="module")
def cluster():
    try:
        with driver_session(cpus_per_node=CPUS_PER_NODE,
                            extra_env=FAST_HEALTH_CHECKS) as nodes:
            yield nodes
    except NotPermitted as reason:
        pytest.skip(f"cannot make network-namespace hosts here: {reason}")


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


def one_process_weights(steps):
    import torch

    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for _ in range(steps):
        train_step(model, optimizer)
    return torch.cat([p.detach().flatten() for p in model.parameters()]).tolist()


def elastic_train(lost_node_address, at_kill_step, at_size_1):
    """One worker: hvd.elastic.run over a TorchState; the worker on the node to be lost marks
    `at_kill_step` at step KILL_AT and waits there for its node's end; rank 0 marks `at_size_1`
    once it committed a step at size 1."""
    import torch

    import runrun.torch as hvd

    hvd.init()
    model = make_model()
    optimizer = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9),
                                         named_parameters=model.named_parameters())
    state = hvd.elastic.TorchState(model, optimizer, step=0, total=0, sizes=[])
    resets = []
    state.register_reset_callbacks([lambda: resets.append(hvd.size())])
    on_lost_node = ray.util.get_node_ip_address() == lost_node_address

    @hvd.elastic.run
    def train(state):
        while state.step < STEPS or state.sizes[-1] != 2:
            if on_lost_node and state.step == KILL_AT and not os.path.exists(at_kill_step):
                open(at_kill_step, "w").close()
                time.sleep(300)  # the test kills this node's raylet meanwhile
            train_step(state.model, state.optimizer)
            size = int(hvd.allreduce(torch.tensor([1.0]), op=hvd.Sum, name="size").item())
            state.total += size
            state.sizes = state.sizes + [size]
            state.step += 1
            time.sleep(0.1)
            state.commit()
            if size == 1 and hvd.rank() == 0:
                open(at_size_1, "w").close()

    train(state)
    weights = torch.cat([p.detach().flatten() for p in state.model.parameters()]).tolist()
    result = (hvd.rank(), hvd.size(), state.step, state.total, state.sizes, resets, weights,
              ray.util.get_node_ip_address())
    hvd.shutdown()
    return result


def test_a_lost_node_leaves_training_at_size_1_from_the_last_commit_until_a_node_comes_back(
        cluster):
    work = tempfile.mkdtemp(prefix="runrun_ray_elastic.")
    at_kill_step, at_size_1 = os.path.join(work, "at-kill-step"), os.path.join(work, "at-size-1")
    executor = RayExecutor(RayExecutor.create_settings(timeout_s=60), min_workers=1,
                           max_workers=2, cpus_per_worker=CPUS_PER_NODE, elastic_timeout=60)
    started = time.monotonic()
    executor.start()
    ids = [w.actor._actor_id.hex() for w in executor._elastic_driver.workers.values()]
    assert len(ids) == 2, "one worker per node"
    outcome = {}

    def run():
        try:
            outcome["results"] = executor.run(
                elastic_train, args=[cluster.node_addresses[1], at_kill_step, at_size_1])
            outcome["generations"] = executor._elastic_driver.generation
            ids.extend(w.actor._actor_id.hex()
                       for w in executor._elastic_driver.workers.values())
        except BaseException as error:  # reported by the assertions below
            outcome["error"] = error

    runner = threading.Thread(target=run)
    runner.start()
    try:
        _wait_for(at_kill_step, runner, "the second node's worker never reached the kill step")
        cluster.kill_raylet(2)
        left_by_lost_node = cluster.wait_until_empty(2)
        _wait_for(at_size_1, runner, "training did not go on at size 1")
        cluster.restart_node(2)
        runner.join(timeout=150)
        assert not runner.is_alive(), "the elastic run did not end"
    finally:
        executor.shutdown()
    took = time.monotonic() - started
    assert "error" not in outcome, outcome.get("error")
    assert left_by_lost_node == {}, f"left by the lost node:\n{_lines(left_by_lost_node)}"
    results = outcome["results"]
    print(f"elastic run: {took:.1f} s, {outcome['generations']} generations, sizes "
          f"{results[0][4]}")

    # The last generation: the head node's worker (rank 0, the oldest) and the new node's.
    assert [r[0:2] for r in results] == [(0, 2), (1, 2)], [r[0:2] for r in results]
    assert [r[7] for r in results] == cluster.node_addresses
    _, _, steps, total, sizes, resets, weights, _ = results[0]
    assert all(r[2:5] == (steps, total, sizes) and r[6] == weights for r in results[1:])
    after = sizes[KILL_AT:]
    k = after.index(2) if 2 in after else len(after)
    assert sizes[:KILL_AT] == [2] * KILL_AT and k >= 1 and after[k:] == [2] * (len(after) - k) \
        and len(after) > k, f"sizes of the committed steps: {sizes}"
    assert steps == len(sizes) >= STEPS and total == sum(sizes), (steps, total, sizes)
    assert resets == [1, 2], resets
    reference = one_process_weights(steps)
    assert max(abs(a - b) for a, b in zip(weights, reference)) < 1e-9, (weights, reference)

    # Nothing left: every actor of the job dead, and after `ray stop` nothing in either host.
    deadline = time.monotonic() + 60
    while True:
        states = {a: ray._private.state.actors(a)["State"] for a in ids}
        if all(s == "DEAD" for s in states.values()) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert all(s == "DEAD" for s in states.values()), states
    ray.shutdown()
    left_by_ray_stop, left_at_all = cluster.stop()
    assert left_by_ray_stop == {}, f"left after `ray stop`:\n{_lines(left_by_ray_stop)}"
    assert left_at_all == {}, f"left after `ray start --block` ended:\n{_lines(left_at_all)}"


def _wait_for(path, runner, what, timeout_s=120):
    deadline = time.monotonic() + timeout_s
    while not os.path.exists(path):
        assert runner.is_alive() and time.monotonic() < deadline, what
        time.sleep(0.1)

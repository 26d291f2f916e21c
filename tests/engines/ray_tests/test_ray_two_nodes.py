"""runrun.ray.RayExecutor on a Ray cluster of two nodes (netns_ray_cluster.py: `ray start
--head` in one network-namespace host, `ray start --address` in another; the driver is this
process, in the root namespace, which reaches both): num_hosts=2, num_workers_per_host=1 trains
as one process on the global batch on every rank; the ranks follow the Ray nodes (each rank on
a node of its own: local_size 1, cross_size 2, cross rank = rank; two Ray nodes, the two hosts'
addresses; two workers sharing a node are test_ray_executor's); after `ray stop` in both
namespaces no raylet, worker or rank is left in either. One training run on one cluster: the
module stays short (one worker per node, as every actor costs seconds on 2 cores)."""


import pytest
import ray
import training
from netns_ray_cluster import NotPermitted, driver_session

from runrun.ray import RayExecutor


@pytest.fixture(scope="module")
def cluster():
    try:
        with driver_session(cpus_per_node=2) as nodes:
            yield nodes
    except NotPermitted as reason:
        pytest.skip(f"cannot make network-namespace hosts here: {reason}")


def train_and_place():
    """training.train_rank, plus where the rank runs and its cross rank."""
    import runrun.torch as hvd

    result = training.train_rank()
    return result + (hvd.cross_rank(), ray.get_runtime_context().get_node_id(),
                     ray.util.get_node_ip_address())


def test_two_nodes_train_as_one_process_with_ranks_following_the_nodes(cluster):
    executor = RayExecutor(RayExecutor.create_settings(timeout_s=60), num_hosts=2,
                           num_workers_per_host=1)
    executor.start()
    try:
        results = executor.run(train_and_place)
    finally:
        executor.shutdown()
    reference = training.one_process_weights()
    nodes, addresses = set(), set()
    for rank, (got_rank, size, local_rank, local_size, cross_size, weights, cross_rank, node,
               address) in enumerate(results):
        assert (got_rank, size, local_rank, local_size, cross_size, cross_rank) == \
            (rank, 2, 0, 1, 2, rank)
        training.assert_matches_one_process(weights, reference)
        nodes.add(node)
        addresses.add(address)
    assert len(nodes) == 2 and addresses == set(cluster.node_addresses)

    ray.shutdown()
    left_by_ray_stop, left_at_all = cluster.stop()
    assert left_by_ray_stop == {}, (
        f"left after `ray stop` in both namespaces:\n{_lines(left_by_ray_stop)}\n"
        f"ray stop (head):\n{cluster.log(1, 'stop')}\nray stop (worker):\n{cluster.log(2, 'stop')}")
    assert left_at_all == {}, f"left after `ray start --block` ended:\n{_lines(left_at_all)}"


def _lines(left):
    return "\n".join(f"{ns} {process}" for ns, processes in left.items() for process in processes)

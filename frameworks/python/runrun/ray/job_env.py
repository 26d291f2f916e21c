"""The environment of every rank of a job of Ray actors, from where the actors landed.

Why: RayExecutor and the Ray Train backend both start their workers first and form the job
after: this asks each worker where it runs, orders the ranks so that they follow the Ray nodes
(a node's workers get neighbouring ranks; local and cross ranks then follow the nodes), has rank
0's worker pick free ports on its node, and builds each rank's variables (direct_env.rank_env),
CUDA_VISIBLE_DEVICES as Horovod sets it (every worker sees the GPUs Ray gave the workers of its
node; hvd.local_rank() picks one), RUNRUN_NETWORK_INTERFACE and the rendezvous timeout.
Thread-safety: driver only.
"""

import ray

from runrun.common import direct_env


def plan_job(nodes, ask_free_ports, *, timeout_s=None, nics=None, use_gpu=False):
    """`nodes[i]`: worker i's describe_node(). `ask_free_ports(worker, count)`: free ports on
    that worker's node. Returns (order, variables): order[r] is the worker of rank r, and
    variables[r] its environment."""
    placed = direct_env.layout([info["node_id"] for info in nodes])
    order = [worker for worker, _, _, _ in placed]
    master = nodes[order[0]]
    rendezvous_port, master_port = ask_free_ports(order[0], 2)
    secret = direct_env.new_secret()
    run_id = direct_env.new_run_id()
    gpus_of_node = {}
    for info in nodes:
        gpus_of_node.setdefault(info["node_id"], set()).update(info["gpu_ids"])
    variables = []
    for rank, (worker, local_rank, local_size, node_index) in enumerate(placed):
        env = direct_env.rank_env(
            rank=rank, size=len(placed), local_rank=local_rank, local_size=local_size,
            node_index=node_index, master_addr=master["address"], master_port=master_port,
            rendezvous_port=rendezvous_port, run_id=run_id, secret=secret)
        if use_gpu:
            env["CUDA_VISIBLE_DEVICES"] = ",".join(
                sorted(gpus_of_node[nodes[worker]["node_id"]], key=_gpu_order))
        if timeout_s is not None:
            env["RUNRUN_RENDEZVOUS_TIMEOUT"] = str(timeout_s)
        if nics:
            env["RUNRUN_NETWORK_INTERFACE"] = ",".join(nics) if not isinstance(nics, str) \
                else nics
        variables.append(env)
    return order, variables


def _gpu_order(gpu):
    return (0, int(gpu)) if gpu.isdigit() else (1, gpu)


def node_names(nodes):
    """For messages: each worker's node as `address (node id prefix)`."""
    return [f"{info['address']} (Ray node {info['node_id'][:12]})" for info in nodes]


def gather(refs, describe_rank):
    """ray.get of one object per rank, in rank order; the first failure raises WorkerFailedError
    naming the rank (describe_rank(rank) -> its node) with the cause chained."""
    from runrun.ray.errors import WorkerFailedError

    pending = {ref: rank for rank, ref in enumerate(refs)}
    results = [None] * len(refs)
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        for ref in ready:
            rank = pending.pop(ref)
            try:
                results[rank] = ray.get(ref)
            except ray.exceptions.RayActorError as error:
                raise WorkerFailedError(rank, describe_rank(rank), "died", error) from error
            except ray.exceptions.RayTaskError as error:
                raise WorkerFailedError(rank, describe_rank(rank), "raised", error) from error
    return results

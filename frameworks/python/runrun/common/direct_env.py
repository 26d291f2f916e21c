"""The environment that makes a process one rank of a runrun job formed without the launcher.

Why: runrun.ray and runrun.spark start ranks as Ray actors and Spark barrier tasks, never through
the `runrun` launcher. They form the job through runrun's "direct" launch (docs/clusters.md):
torchrun's variables (WORLD_SIZE, RANK, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR,
MASTER_PORT, TORCHELASTIC_RUN_ID) say where each rank is and where rank 0 serves the job's
rendezvous store; RUNRUN_RENDEZVOUS_PORT pins its port (rank 0's host picked a free one) and
RUNRUN_RENDEZVOUS_SECRET, a fresh random secret from the driver, authenticates it: only the
processes the driver handed the secret to can join. hvd.init() in the rank then forms the job.
Thread-safety: pure functions, except free_port (asks the OS) and apply (os.environ).
"""

import os
import secrets
import socket
import uuid

# What a previous job in a reused process may have left behind and what runrun reads.
_DIRECT_NAMES = ("WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK",
                 "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID", "RUNRUN_RENDEZVOUS_PORT",
                 "RUNRUN_RENDEZVOUS_ADDR", "RUNRUN_RENDEZVOUS_SECRET", "RUNRUN_CONTROLLER")


def new_secret():
    """A job's rendezvous secret: 64 hex digits (runrun's JobSecret), from the OS's random."""
    return secrets.token_hex(32)


def new_run_id():
    return uuid.uuid4().hex


def free_port():
    """A TCP port nobody holds on this host now (the OS's pick). Another process could take it
    before rank 0 binds it: rank 0's init() then fails naming RUNRUN_RENDEZVOUS_PORT."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("", 0))
        return probe.getsockname()[1]


def node_address():
    """This host's address as the others reach it: the source address of a route towards a
    public address (no packet is sent), else the host name's address."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("8.8.8.8", 80))
            return probe.getsockname()[0]
    except OSError:
        return socket.gethostbyname(socket.gethostname())


def layout(node_of_worker):
    """Ranks that follow the nodes: `node_of_worker[i]` is worker i's node (any hashable). Returns
    a list of (worker index, local rank, local size, node index) in rank order: the workers of
    the first node seen first, then the next node's, each node's in worker order."""
    nodes = []
    for node in node_of_worker:
        if node not in nodes:
            nodes.append(node)
    placed = []
    for node_index, node in enumerate(nodes):
        members = [i for i, n in enumerate(node_of_worker) if n == node]
        for local_rank, worker in enumerate(members):
            placed.append((worker, local_rank, len(members), node_index))
    return placed


def rank_env(*, rank, size, local_rank, local_size, node_index, master_addr, master_port,
             rendezvous_port, run_id, secret):
    """The variables of one rank (contains the secret: pass it to that rank's environment only,
    never to a log or a command line)."""
    return {
        "WORLD_SIZE": str(size), "RANK": str(rank), "LOCAL_RANK": str(local_rank),
        "LOCAL_WORLD_SIZE": str(local_size), "GROUP_RANK": str(node_index),
        "MASTER_ADDR": master_addr, "MASTER_PORT": str(master_port),
        "TORCHELASTIC_RUN_ID": run_id, "RUNRUN_RENDEZVOUS_PORT": str(rendezvous_port),
        "RUNRUN_RENDEZVOUS_SECRET": secret,
    }


def apply(variables):
    """Makes this process a rank of the job `variables` describe (a previous job's variables
    go first)."""
    for name in _DIRECT_NAMES:
        os.environ.pop(name, None)
    os.environ.update(variables)

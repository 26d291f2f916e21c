"""The body of each barrier task of runrun.spark.run: meet the other tasks, form the job's
environment, run the rank in a process of its own, hand back its outcome.

Why: in a barrier stage every task starts at once and BarrierTaskContext.allGather lets them
exchange where they run without any service on the driver. The task's partition id is its rank;
rank 0's host serves runrun's rendezvous on a port rank 0 picked; the secret came from the
driver inside the stage's closure (never on a command line). Ranks that share an address share
a host (local ranks, GROUP_RANK). Thread-safety: one task per Python worker at a time.
"""

import json
import os
import socket
import subprocess
import sys
import tempfile
import time

from runrun.common import direct_env


def run_rank(payload, secret, run_id, extra_env, timeout_s):
    """mapPartitions body: yields one (rank, status, data, stdout, stderr, end, address)
    tuple (end: when the rank's function returned or raised, or its process ended)."""

    def body(_partition):
        from pyspark import BarrierTaskContext

        context = BarrierTaskContext.get()
        rank = context.partitionId()
        me = {"address": direct_env.node_address(), "hostname": socket.gethostname(),
              "ports": [direct_env.free_port(), direct_env.free_port()] if rank == 0 else []}
        everyone = [json.loads(text) for text in context.allGather(json.dumps(me))]
        env = dict(os.environ)
        env.update(rank_variables(everyone, rank, secret, run_id, timeout_s))
        env.update(extra_env or {})
        yield run_process(rank, payload, env) + (me["address"],)

    return body


def rank_variables(everyone, rank, secret, run_id, timeout_s):
    """The direct-launch variables of `rank`; everyone[r] is rank r's allGather message."""
    nodes = []
    for info in everyone:
        if info["address"] not in nodes:
            nodes.append(info["address"])
    mine = everyone[rank]["address"]
    same_host = [r for r, info in enumerate(everyone) if info["address"] == mine]
    rendezvous_port, master_port = everyone[0]["ports"]
    variables = direct_env.rank_env(
        rank=rank, size=len(everyone), local_rank=same_host.index(rank),
        local_size=len(same_host), node_index=nodes.index(mine),
        master_addr=everyone[0]["address"], master_port=master_port,
        rendezvous_port=rendezvous_port, run_id=run_id, secret=secret)
    variables["RUNRUN_RENDEZVOUS_TIMEOUT"] = str(timeout_s)
    return variables


def run_process(rank, payload, env):
    """Runs runrun.spark.task_process; returns (rank, status, data, stdout, stderr, end): status
    "ok" (data: the pickled result), "error" (data: the traceback) or "died" (data: how)."""
    with tempfile.TemporaryDirectory(prefix=f"runrun-spark-rank{rank}-") as work:
        payload_path = os.path.join(work, "payload")
        result_path = os.path.join(work, "result")
        with open(payload_path, "wb") as f:
            f.write(payload)
        completed = subprocess.run(
            [sys.executable, "-m", "runrun.spark.task_process", payload_path, result_path],
            env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
            errors="replace", check=False)
        if os.path.exists(result_path):
            with open(result_path, "rb") as f:
                data = f.read()
            from runrun.common import object_codec
            status, value, end = object_codec.loads(data)
            if status == "ok":
                return rank, "ok", data, completed.stdout, completed.stderr, end
            return rank, "error", value, completed.stdout, completed.stderr, end
        code = completed.returncode
        how = (f"its process was killed by signal {-code}" if code < 0
               else f"its process exited with status {code} before returning")
        return rank, "died", how, completed.stdout, completed.stderr, time.time()

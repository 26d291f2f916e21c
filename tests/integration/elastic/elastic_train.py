"""A rank of the elastic end-to-end tests (elastic_*.sh): trains a tiny model with
hvd.elastic.run and TorchState for STEPS steps, committing after every step, and lets the test
kill a worker or grow the hosts in the middle.

Every rank trains on the same batch, so the averaged gradient does not depend on the size and
the final weights equal those of STEPS plain steps in one process (the oracle, computed by
--oracle); `state.total` adds the size of each committed step, so the commit log (rank 0 writes
"commit step=S size=N" to stdout) gives its expected value. Rank 0 prints "final ..." at the end.

Environment: ELASTIC_STEPS (30), ELASTIC_KILL_WORKER / ELASTIC_KILL_STEP (that worker kills
itself with SIGKILL when it reaches that step), ELASTIC_STOP_WORKER / ELASTIC_STOP_STEP (the same
with SIGSTOP: a hung rank), ELASTIC_GROW_FILE / ELASTIC_GROW_STEP /
ELASTIC_GROW_HOSTS (rank 0 writes these host:slots, commas for lines, into the discovery
script's file at that step),
ELASTIC_STEP_SLEEP (seconds per step, 0.05), ELASTIC_KILL_READY_FILE / ELASTIC_KILL_AFTER_FILE
(the worker to kill creates the first file at its step, then waits for the second to exist before
it kills itself: at most 120 s), ELASTIC_LINGER (seconds a rank stays alive after the elastic
loop and shutdown, as a script that evaluates or writes files after training, 0).
"""
import os
import signal
import sys
import time

import torch

STEPS = int(os.environ.get("ELASTIC_STEPS", "30"))


def make_model():
    torch.manual_seed(1234)
    return torch.nn.Linear(4, 1)


def batch():
    generator = torch.Generator().manual_seed(7)
    return torch.randn(8, 4, generator=generator), torch.randn(8, 1, generator=generator)


def step(model, optimizer):
    data, target = batch()
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(data), target)
    loss.backward()
    optimizer.step()


def oracle():
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for _ in range(STEPS):
        step(model, optimizer)
    flat = torch.cat([p.detach().flatten() for p in model.parameters()])
    print(" ".join("%.6f" % v for v in flat))


def main():
    import runrun.torch as hvd

    hvd.init()
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters())
    state = hvd.elastic.TorchState(model, optimizer, step=0, total=0)
    resets = []
    def on_reset():
        resets.append(hvd.size())
        if hvd.rank() == 0:  # training again: the new generation is up and the state synced
            print("elastic-reset t=%.3f" % time.time(), flush=True)

    state.register_reset_callbacks([on_reset])
    worker = os.environ.get("RUNRUN_ELASTIC_WORKER")
    kill_worker = os.environ.get("ELASTIC_KILL_WORKER")
    kill_step = int(os.environ.get("ELASTIC_KILL_STEP", "-1"))
    stop_worker = os.environ.get("ELASTIC_STOP_WORKER")
    stop_step = int(os.environ.get("ELASTIC_STOP_STEP", "-1"))
    grow_file = os.environ.get("ELASTIC_GROW_FILE")
    grow_step = int(os.environ.get("ELASTIC_GROW_STEP", "-1"))
    pause = float(os.environ.get("ELASTIC_STEP_SLEEP", "0.05"))
    kill_ready = os.environ.get("ELASTIC_KILL_READY_FILE")
    kill_after = os.environ.get("ELASTIC_KILL_AFTER_FILE")

    @hvd.elastic.run
    def train(state):
        while state.step < STEPS:
            if worker == kill_worker and state.step == kill_step:
                if kill_ready:
                    open(kill_ready, "w").close()
                for _ in range(1200):
                    if not kill_after or os.path.exists(kill_after):
                        break
                    time.sleep(0.1)
                print("elastic-kill t=%.3f" % time.time(), flush=True)
                os.kill(os.getpid(), signal.SIGKILL)
            if worker == stop_worker and state.step == stop_step:
                os.kill(os.getpid(), signal.SIGSTOP)  # hung: alive, but never answers
            if grow_file and hvd.rank() == 0 and state.step == grow_step:
                with open(grow_file, "w") as f:
                    f.write(os.environ["ELASTIC_GROW_HOSTS"].replace(",", "\n") + "\n")
            step(state.model, state.optimizer)
            size = hvd.allreduce(torch.tensor([1.0]), op=hvd.Sum, name="size").item()
            state.total += int(size)
            state.step += 1
            if hvd.rank() == 0:
                print("commit step=%d size=%d" % (state.step, int(size)), flush=True)
            time.sleep(pause)
            state.commit()

    train(state)
    weights = torch.cat([p.detach().flatten() for p in state.model.parameters()])
    gathered = hvd.allgather(weights.unsqueeze(0), name="final")
    assert all(torch.equal(gathered[0], row) for row in gathered), "ranks disagree"
    if hvd.rank() == 0:
        print("final total=%d size=%d resets=%s" % (state.total, hvd.size(), resets), flush=True)
        print("final weights " + " ".join("%.6f" % v for v in weights), flush=True)
    hvd.shutdown()
    time.sleep(float(os.environ.get("ELASTIC_LINGER", "0")))


if __name__ == "__main__":
    if sys.argv[1:] == ["--oracle"]:
        oracle()
    else:
        main()

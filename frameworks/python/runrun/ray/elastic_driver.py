"""The elastic driver of RayExecutor(min_workers=..., max_workers=...): the launcher's elastic
driver (launcher/elastic/, docs/elastic.md) over Ray actors.

Why: runrun's elastic ranks (hvd.elastic.run, the State classes) follow generations that a
driver publishes in the job's rendezvous store (rendezvous/elastic_keys.h), and that store must
outlive every rank. Here the driver is the Ray driver: it serves the store for the whole job
with the C++ server (runrun._core.JobStoreServer) and writes the generations with the C++ client,
as the launcher does; a worker is an actor (elastic_workers.py), an actor call failing with
RayActorError is a worker that ended, and `ray.nodes()`, polled, is the host discovery
(elastic_hosts.py). The rules are the launcher's: a burst of losses settles into one generation
(250 ms), rank 0 is the oldest member, a member that never joins is stopped after
elastic_timeout, fewer than min_workers for elastic_timeout ends the job, more than reset_limit
resets end it, a worker returning ends the job (the others of its generation get
elastic_timeout to return too). Progress is reported on stderr ("runrun.ray: elastic: ...").
Thread-safety: driver only; one run() at a time.
"""

import socket
import sys
import time

import ray

from runrun.common import direct_env, loader
from runrun.ray import elastic_hosts
from runrun.ray import elastic_workers as keys
from runrun.ray.elastic_workers import ElasticWorkerRecord, kill, start_actor, worker_env
from runrun.ray.errors import ElasticJobFailedError

SETTLE_S = 0.25           # launcher/elastic/elastic_driver_state.h: kElasticSettle
# A rank's report of a failed collective comes before Ray's word on the worker that died (its
# actor call failing; 1.4 s later on the two-node test cluster): wait longer after a report, so
# that one loss makes one generation, not a first one that still counts the dead worker (which
# never forms) and then another.
REPORT_SETTLE_S = 2.0
STORE_POLL_S = 0.1        # kElasticStorePoll
DISCOVERY_INTERVAL_S = 1.0


def _say(message):
    print(f"runrun.ray: elastic: {message}", file=sys.stderr, flush=True)


class ElasticDriver:
    """start() serves the store and starts the first workers; run(submit) runs one function on
    every worker through the generations and returns the results of the generation it ended
    in, in rank order; shutdown() stops everything."""

    def __init__(self, options, *, cpus_per_worker, gpus_per_worker, timeout_s, nics,
                 executable, extra_env):
        self.options = options
        self.cpus_per_worker = cpus_per_worker
        self.gpus_per_worker = gpus_per_worker
        self.timeout_s = timeout_s
        self.nics = nics
        self.executable = executable
        self.extra_env = dict(extra_env or {})
        self.hosts = elastic_hosts.HostTable(options.cooldown_range)
        self.workers = {}       # id -> ElasticWorkerRecord (ended ones too)
        self.generation = 0
        self.members = []       # ids of the current generation, in rank order
        self.members_of = {}    # generation -> its members in rank order
        self.resets = 0
        self.lost = []
        self._next_id = 0
        self._server = self._store = self._secret = None
        self._address = None
        self._submit = None

    # -- lifetime -------------------------------------------------------------------------

    def start(self):
        core = loader.core()
        self._secret = direct_env.new_secret()
        self._address = _driver_address()
        self._server = core.JobStoreServer(self._address, 0, self._secret)
        self._store = core.JobStoreClient(self._address, self._server.port, self._secret,
                                          float(self.timeout_s or 30),
                                          "the Ray elastic driver")
        deadline = time.monotonic() + self.options.elastic_timeout
        while True:
            self.hosts.update(elastic_hosts.discover(self.cpus_per_worker, self.gpus_per_worker))
            slots = sum(self.hosts.slots.values())
            if slots >= self.options.min_workers:
                break
            if time.monotonic() >= deadline:
                raise ElasticJobFailedError(
                    f"the Ray cluster has {slots} worker slots (CPUs / cpus_per_worker "
                    f"{self.cpus_per_worker}, GPUs / gpus_per_worker {self.gpus_per_worker}), "
                    f"fewer than min_workers {self.options.min_workers}, for elastic_timeout "
                    f"{self.options.elastic_timeout:g} s")
            time.sleep(DISCOVERY_INTERVAL_S)
        first = self.options.num_workers or slots
        for node_id, free in self.hosts.free_slots({}):
            for _ in range(min(free, first - len(self.workers))):
                self._start_worker(node_id)
        # Every first worker has its environment before run() (errors show here).
        ray.get([w.env_ref for w in self.workers.values()], timeout=self.options.elastic_timeout)

    def shutdown(self):
        for worker in self.workers.values():
            kill(worker)
        self.workers = {}
        if self._store is not None:
            self._store.close()
            self._store = None
        if self._server is not None:
            self._server.stop()
            self._server = None

    # -- one run --------------------------------------------------------------------------

    def run(self, submit):
        """submit(actor) -> ObjectRef of the function's call on that worker."""
        self._submit = submit
        self._failure = None
        self._finishing = False
        self._finished_generation = None
        self._finish_deadline = None
        self._change_pending = False
        self._change_at = None
        self._below_min_since = None
        self._not_joined = {}
        self._first_generation = self.generation + 1
        self._next_store_poll = self._next_discovery = time.monotonic()
        for worker in self._running():
            worker.ref, worker.done, worker.succeeded = submit(worker.actor), False, False
        self._publish(self._running())
        while True:
            now = time.monotonic()
            self._collect(now)
            if self._failure is None:
                self._decide(time.monotonic())
            if self._failure is not None:
                break
            if self._finishing and self._finished():
                break
        if self._failure is not None:
            failure = self._failure
            self.shutdown()
            raise ElasticJobFailedError(failure)
        members = self.members_of[self._finished_generation]
        return [self.workers[i].result for i in members]

    def _decide(self, now):
        if self._finishing:
            if now >= self._finish_deadline:
                self._failure = (f"a worker returned but others of generation "
                                 f"{self._finished_generation} were still running "
                                 f"{self.options.elastic_timeout:g} s later (elastic_timeout)")
            return
        if now >= self._next_store_poll:
            self._poll_store(now)
        if now >= self._next_discovery:
            self._discover(now)
        self._check_join_deadlines(now)
        if self._below_min_since is not None and \
                now - self._below_min_since >= self.options.elastic_timeout:
            self._schedule_change(now, at_once=True)  # _apply_change ends the job
        if self._change_pending and now >= self._change_at:
            self._apply_change(now)
        if self._failure is None and not self._running() and not self._change_pending and \
                self._below_min_since is None:
            self._failure = "no worker is running; " + self._lost_summary()

    # -- events ---------------------------------------------------------------------------

    def _collect(self, now):
        """The calls that returned or failed since the last look (waits up to 0.1 s)."""
        pending = {w.ref: w for w in self.workers.values() if w.ref is not None and not w.done}
        if not pending:
            time.sleep(0.1)
            return
        ready, _ = ray.wait(list(pending), num_returns=len(pending), timeout=0.1)
        for ref in ready:
            worker = pending[ref]
            worker.done = True
            try:
                worker.result = ray.get(ref)
                worker.succeeded = True
            except ray.exceptions.RayActorError as error:
                kill(worker)  # unavailable may mean unreachable: it must not come back
                self._on_end(worker, "its worker died (the actor's process ended or its node "
                             "was lost)", error, now)
            except ray.exceptions.RayTaskError as error:
                kill(worker)  # its runtime may be half gone: the next generation goes without
                self._on_end(worker, "its function raised", error, now)
            else:
                self._on_return(worker, now)

    def _on_return(self, worker, now):
        if self._finishing:
            return
        self._finishing = True
        self._finish_deadline = now + self.options.elastic_timeout
        finished_in = self._joined_generation(worker.id)
        self._finished_generation = finished_in
        # A generation newer than the one it finished in can never form: its members that were
        # not in that one wait in vain and are stopped (not failures), as in the launcher.
        for other in self._running():
            if other.id not in self.members_of.get(finished_in, []):
                _say(f"worker {other.id} ({self.hosts.name(other.node_id)}) stopped: worker "
                     f"{worker.id} returned in generation {finished_in}, so generation "
                     f"{self.generation}, which it waits in, cannot form")
                other.stopping = True
                kill(other)

    def _finished(self):
        """Every member of the generation the job finished in returned (or ended: a failure)."""
        members = [self.workers[i] for i in self.members_of[self._finished_generation]]
        for worker in members:
            if worker.ended and not worker.succeeded and self._failure is None:
                self._failure = ("a worker failed after the function returned on another; " +
                                 self._lost_summary())
        return all(w.done for w in members)

    def _on_end(self, worker, how, cause, now):
        if worker.ended or worker.stopping:
            return
        worker.ended = True
        rank = self.members.index(worker.id) if worker.id in self.members else None
        where = (f" (rank {rank} of generation {self.generation})" if rank is not None else "")
        lines = [line.strip() for line in str(cause).splitlines() if line.strip()]
        # A task's error ends with the exception ("ValueError: ..."); an actor's starts with why.
        said = (lines[-1] if isinstance(cause, ray.exceptions.RayTaskError) else lines[0]) \
            if lines else ""
        self.lost.append(f"worker {worker.id}{where} on {self.hosts.name(worker.node_id)}: "
                         f"{how}" + (f" ({said})" if said else ""))
        if self._finishing:
            return  # _finished() reports it if it was a member of the finishing generation
        cooldown = self.hosts.record_failure(worker.node_id, now)
        _say(f"{self.lost[-1]}; node {self.hosts.name(worker.node_id)} gets no new worker for "
             f"{cooldown:.0f} s")
        self._schedule_change(now)

    def _poll_store(self, now):
        """Which members took their place; did a rank report a failed collective?"""
        self._next_store_poll = now + STORE_POLL_S
        if self._change_pending:
            return
        for worker_id in list(self._not_joined):
            worker = self.workers[worker_id]
            if not worker.running:
                del self._not_joined[worker_id]
            elif self._store.check(self.generation, keys.joined_key(worker_id)):
                del self._not_joined[worker_id]
        if self._store.get(keys.CONTROL_GENERATION, keys.failed_key(self.generation)) is not None:
            self._schedule_change(now, settle=REPORT_SETTLE_S)

    def _discover(self, now):
        """ray.nodes(): members on nodes that left have ended; new slots call for a change."""
        self._next_discovery = now + DISCOVERY_INTERVAL_S
        self.hosts.update(elastic_hosts.discover(self.cpus_per_worker, self.gpus_per_worker))
        for worker in self._running():
            if not self.hosts.alive(worker.node_id):
                kill(worker)
                worker.done = True
                self._on_end(worker, "its node left the Ray cluster", "", now)
        running = self._running()
        room = self._room(len(running))
        if room > 0 and self.hosts.free_slots(self._per_node(running), now):
            self._schedule_change(now)

    def _check_join_deadlines(self, now):
        for worker_id, since in list(self._not_joined.items()):
            worker = self.workers[worker_id]
            if not worker.running or now < since + self.options.elastic_timeout:
                continue
            del self._not_joined[worker_id]
            self.lost.append(f"worker {worker_id} on {self.hosts.name(worker.node_id)}: did not "
                             f"join generation {self.generation} within elastic_timeout "
                             f"{self.options.elastic_timeout:g} s")
            _say(self.lost[-1] + ": stopping it")
            self.hosts.record_failure(worker.node_id, now)
            worker.ended = True
            kill(worker)
            self._schedule_change(now)

    # -- generations ----------------------------------------------------------------------

    def _schedule_change(self, now, at_once=False, settle=SETTLE_S):
        if not self._change_pending:
            self._change_at = now + (0 if at_once else settle)
        elif at_once:
            self._change_at = now
        self._change_pending = True

    def _apply_change(self, now):
        self._change_pending = False
        running = self._running()
        room = self._room(len(running))
        for node_id, free in self.hosts.free_slots(self._per_node(running), now):
            for _ in range(min(free, room)):
                self._start_worker(node_id)
                room -= 1
        members = self._running()
        if len(members) < self.options.min_workers:
            if self._below_min_since is None:
                self._below_min_since = now
                _say(f"{len(members)} worker{'s' if len(members) != 1 else ''} can run, fewer "
                     f"than min_workers {self.options.min_workers}: waiting up to "
                     f"{self.options.elastic_timeout:g} s for Ray nodes")
            if now - self._below_min_since < self.options.elastic_timeout:
                return  # a discovery with new slots schedules the next try
            self._failure = (f"only {len(members)} worker{'s' if len(members) != 1 else ''} "
                             f"can run, fewer than min_workers {self.options.min_workers} for "
                             f"elastic_timeout {self.options.elastic_timeout:g} s; " +
                             self._lost_summary())
            return
        self._below_min_since = None
        if self.generation >= self._first_generation:
            self.resets += 1
            if 0 <= self.options.reset_limit < self.resets:
                self._failure = (f"the job was reset {self.resets} times, more than reset_limit "
                                 f"{self.options.reset_limit}; " + self._lost_summary())
                return
        self._publish(members)

    def _publish(self, running):
        """Every member's assignment of the next generation, then its number (elastic_keys.h);
        rank 0 is the oldest member, a node's workers get neighbouring ranks."""
        oldest = {}
        for worker in running:
            oldest[worker.node_id] = min(oldest.get(worker.node_id, worker.id), worker.id)
        order = sorted(running, key=lambda w: (oldest[w.node_id], w.id))
        generation = self.generation + 1
        for rank, worker in enumerate(order):
            self._store.set(generation, keys.assignment_key(worker.id), keys.format_assignment(
                rank, len(order), self.hosts.index[worker.node_id]).encode())
        self._store.set(keys.CONTROL_GENERATION, keys.GENERATION_KEY, str(generation).encode())
        self.generation = generation
        self.members = [w.id for w in order]
        self.members_of[generation] = self.members
        now = time.monotonic()
        for worker_id in self.members:
            self._not_joined.setdefault(worker_id, now)  # keeps an older time
        where = ",".join(f"{self.hosts.address.get(n, '?')}:{c}"
                         for n, c in self._per_node(order).items())
        _say(f"generation {generation}: {len(order)} rank{'s' if len(order) != 1 else ''} on "
             f"{where}")

    # -- workers --------------------------------------------------------------------------

    def _start_worker(self, node_id):
        worker_id = self._next_id
        self._next_id += 1
        actor = start_actor(node_id, cpus_per_worker=self.cpus_per_worker,
                            gpus_per_worker=self.gpus_per_worker, executable=self.executable)
        worker = ElasticWorkerRecord(id=worker_id, node_id=node_id, actor=actor)
        self.workers[worker_id] = worker
        worker.env_ref = actor.set_env.remote(worker_env(
            worker_id=worker_id, store_address=self._address, store_port=self._server.port,
            secret=self._secret, elastic_timeout=self.options.elastic_timeout,
            timeout_s=self.timeout_s, nics=self.nics, extra_env=self.extra_env))
        if self._submit is not None:
            worker.ref = self._submit(actor)  # runs after set_env (an actor's calls are ordered)
        return worker

    def _running(self):
        return [w for w in self.workers.values() if w.running]

    def _per_node(self, workers):
        counts = {}
        for worker in workers:
            counts[worker.node_id] = counts.get(worker.node_id, 0) + 1
        return counts

    def _room(self, running):
        cap = self.options.max_workers
        return (cap - running) if cap is not None else sys.maxsize

    def _joined_generation(self, worker_id):
        for generation in range(self.generation, 0, -1):
            if self._store.check(generation, keys.joined_key(worker_id)):
                return generation
        return self.generation

    def _lost_summary(self):
        return "lost: " + "; ".join(self.lost) if self.lost else "nothing was lost"


def _driver_address():
    """The address the Ray nodes reach this driver at: this host's source address towards the
    cluster's GCS (a driver may run outside every node: `ray.init(address=...)` from another
    host), or, when that is loopback (the driver runs on the head), the node's address as Ray
    knows it."""
    host, port = ray.get_runtime_context().gcs_address.rsplit(":", 1)
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect((host, int(port)))  # no packet is sent
            address = probe.getsockname()[0]
    except OSError:
        address = "127.0.0.1"
    return ray.util.get_node_ip_address() if address.startswith("127.") else address

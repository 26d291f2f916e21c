"""A Ray cluster of two nodes on this machine: `ray start --head` in one network-namespace host
and `ray start --address` in another, as tests/integration/launcher/netns_hosts.sh makes hosts
(a bridge in this namespace, each host a namespace joined to it by a veth pair, on a private
subnet; this namespace's bridge address reaches both, so the test's driver runs here).

Why: a RayExecutor job across two Ray nodes must put each node's ranks on their own "host"
(local and cross ranks follow the nodes) and talk over a real network, which one
`ray.init(num_cpus=...)` cannot show. Each node also runs in a PID namespace of its own
(`unshare --pid --fork --mount-proc --kill-child`): `ray stop` there sees, and stops, only that
node's processes (run on the root namespace, it would stop every Ray of the machine), and when
the node's `ray start --block` ends the kernel ends whatever is left in it, so "nothing left" is
checked by `ip netns pids`. Token authentication with a fresh token (RAY_AUTH_TOKEN) in the
nodes' and the driver's environment. Everything is removed in stop()/cleanup(), also after a
failure. Needs root (ip netns). Thread-safety: one test module's fixture, one thread.
"""

import contextlib
import os
import secrets
import shutil
import subprocess
import tempfile
import time


class NotPermitted(Exception):
    """This machine does not let the test make namespace hosts (the reason is the message)."""


def _ip(*args):
    done = subprocess.run(["ip", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise NotPermitted(f"ip {' '.join(args)}: {done.stderr.strip()}")


class NamespaceRayCluster:
    """start(): the two nodes running; `address` (the head's GCS), `node_addresses`;
    kill_raylet(i) / restart_node(i): node i lost, and a new node in its host;
    stop(): `ray stop` in each node, then what is left (see there); cleanup(): removes the
    namespaces and
    links, killing what is left (always safe)."""

    def __init__(self, cpus_per_node=2, extra_env=None):
        tag = f"re{os.getpid() % 100000}"
        octet = os.getpid() % 200 + 20
        self.cpus_per_node = cpus_per_node
        self.bridge = f"{tag}br"
        self.namespaces = [f"{tag}ns1", f"{tag}ns2"]
        self.links = [f"{tag}h1", f"{tag}h2"]
        self.node_addresses = [f"10.232.{octet}.11", f"10.232.{octet}.12"]
        self.address = f"{self.node_addresses[0]}:6379"
        self.work = tempfile.mkdtemp(prefix="runrun_ray_netns.")
        self.env = dict(os.environ, RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=secrets.token_hex(32),
                        RAY_USAGE_STATS_ENABLED="0", **(extra_env or {}))
        self.nodes = []  # the `ray start --block` processes (unshare), head first
        self._restarts = 0
        self._made = []  # what cleanup() removes, in order made

    def make_hosts(self):
        if os.geteuid() != 0:
            raise NotPermitted("the two-node Ray test needs root for ip netns")
        for tool in ("ip", "unshare", "nsenter"):
            if shutil.which(tool) is None:
                raise NotPermitted(f"{tool} is not installed")
        gateway = self.node_addresses[0].rsplit(".", 1)[0] + ".1"
        _ip("link", "add", self.bridge, "type", "bridge")
        self._made.append(("link", self.bridge))
        _ip("addr", "add", f"{gateway}/24", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")
        for i, (ns, link, address) in enumerate(
                zip(self.namespaces, self.links, self.node_addresses), start=1):
            peer = link[:-2] + f"p{i}"
            _ip("netns", "add", ns)
            self._made.append(("netns", ns))
            _ip("link", "add", link, "type", "veth", "peer", "name", peer)
            self._made.append(("link", link))
            _ip("link", "set", link, "master", self.bridge)
            _ip("link", "set", link, "up")
            _ip("link", "set", peer, "netns", ns)
            _ip("netns", "exec", ns, "ip", "addr", "add", f"{address}/24", "dev", peer)
            _ip("netns", "exec", ns, "ip", "link", "set", peer, "up")
            _ip("netns", "exec", ns, "ip", "link", "set", "lo", "up")

    def start(self):
        """Both nodes at once (the worker node retries until the head's GCS answers)."""
        self.make_hosts()
        for i in (1, 2):
            self.nodes.append(self._start_node(i))

    def restart_node(self, i):
        """A new Ray node in host i (after the previous one ended there: a machine that came
        back); it joins the cluster under a new node id."""
        assert self.nodes[i - 1].poll() is not None, f"node {i} is still running"
        self._restarts += 1
        self.nodes[i - 1] = self._start_node(i, suffix=f"r{self._restarts}")

    def _start_node(self, i, suffix=""):
        common = ["--block", f"--num-cpus={self.cpus_per_node}", "--num-gpus=0",
                  "--object-store-memory=100000000"]
        role = (["--head", "--port=6379", "--include-dashboard=false"] if i == 1
                else [f"--address={self.address}"])
        ns, address = self.namespaces[i - 1], self.node_addresses[i - 1]
        log = open(os.path.join(self.work, f"node{i}{suffix}.log"), "w")
        try:
            return subprocess.Popen(
                ["ip", "netns", "exec", ns, "unshare", "--pid", "--fork", "--mount-proc",
                 "--kill-child", "ray", "start", *role, *common, f"--node-ip-address={address}",
                 f"--temp-dir={os.path.join(self.work, f'ray{i}{suffix}')}"],
                stdout=log, stderr=subprocess.STDOUT, env=self.env, start_new_session=True)
        finally:
            log.close()

    def authenticate_this_process(self):
        """This process (the driver) uses the nodes' token from now on; returns the function
        that restores what it used before. Ray reads RAY_AUTH_MODE when it is imported and
        caches the token: both are reloaded here as Ray's own tests do
        (ray._private.authentication_test_utils.reset_auth_token_state)."""
        names = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")
        saved = {name: os.environ.get(name) for name in names}
        os.environ.pop("RAY_AUTH_TOKEN_PATH", None)
        os.environ.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=self.env["RAY_AUTH_TOKEN"])
        _reload_ray_auth()

        def restore():
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            _reload_ray_auth()
        return restore

    def log(self, i, what="node"):
        """The last lines of node i's `ray start` (what="node") or `ray stop` (what="stop")."""
        with open(os.path.join(self.work, f"{what}{i}.log")) as f:
            return f.read()[-3000:]

    def _node_init_pid(self, node):
        """The node's `ray start` (PID 1 of its PID namespace), as this namespace numbers it."""
        with open(f"/proc/{node.pid}/task/{node.pid}/children") as children:
            return int(children.read().split()[0])

    def stop(self, deadline_s=60):
        """`ray stop` in both nodes (together), as a user would. Returns what is left in the
        namespaces besides each node's own `ray start --block` (which stays until signalled):
        {} when every raylet, GCS, worker and rank has ended (waited for, bounded). Then ends
        the `ray start --block` processes and returns what is left in the namespaces at all."""
        stoppers, own = [], set()
        for i, node in enumerate(self.nodes, start=1):
            if node.poll() is None:
                init = self._node_init_pid(node)
                own.update((str(node.pid), str(init)))
                with open(os.path.join(self.work, f"stop{i}.log"), "w") as log:
                    stoppers.append(subprocess.Popen(
                        ["nsenter", "-t", str(init), "-p", "-m", "-n", "ray", "stop"],
                        stdout=log, stderr=subprocess.STDOUT, env=self.env))
        for stopper in stoppers:
            stopper.wait(timeout=deadline_s)
        left_by_ray_stop = self._wait_until_only(own, deadline_s)
        # `ray start --block` outlives `ray stop` and takes ~30 s over SIGTERM: SIGKILL its
        # unshare (--kill-child ends the node's PID namespace with it).
        for node in self.nodes:
            node.kill()
        for node in self.nodes:
            node.wait(timeout=deadline_s)
        return left_by_ray_stop, self._wait_until_only(set(), deadline_s)

    def kill_raylet(self, i):
        """SIGKILL node i's raylet (as a lost machine, or an OOM kill, ends it): that node's
        `ray start --block` then stops its other processes and ends, and with it its PID
        namespace (--kill-child). Returns the raylet's pid."""
        ns = self.namespaces[i - 1]
        done = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
        for pid in done.stdout.split():
            if "/raylet/raylet" in _cmdline(pid).split(" ", 2)[1]:
                os.kill(int(pid), 9)
                return int(pid)
        raise AssertionError(f"no raylet in {ns}: {[_cmdline(p) for p in done.stdout.split()]}")

    def wait_until_empty(self, i, deadline_s=60):
        """What is left in node i's namespace after deadline_s at most ({} when nothing)."""
        deadline = time.monotonic() + deadline_s
        while True:
            left = {ns: procs for ns, procs in self.processes_left().items()
                    if ns == self.namespaces[i - 1]}
            if not left or time.monotonic() > deadline:
                return left
            time.sleep(0.2)

    def _wait_until_only(self, own, deadline_s):
        deadline = time.monotonic() + deadline_s
        while True:
            left = self.processes_left(besides=own)
            if not left or time.monotonic() > deadline:
                return left
            time.sleep(0.2)

    def processes_left(self, besides=()):
        """{namespace: [pid: command line]} of the processes in each namespace (pids in
        `besides` left out), only the namespaces with any."""
        left = {}
        for ns in self.namespaces:
            done = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
            pids = [pid for pid in done.stdout.split() if pid not in besides]
            if pids:
                left[ns] = [_cmdline(pid) for pid in pids]
        return left

    def cleanup(self):
        for node in self.nodes:
            if node.poll() is None:
                node.kill()  # unshare --kill-child: the node's whole PID namespace ends
                node.wait(timeout=30)
        for ns in self.namespaces:
            done = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
            for pid in done.stdout.split():
                try:
                    os.kill(int(pid), 9)
                except ProcessLookupError:
                    pass
        for kind, name in reversed(self._made):
            args = ["link", "del", name] if kind == "link" else ["netns", "del", name]
            subprocess.run(["ip", *args], capture_output=True)
        self._made = []
        shutil.rmtree(self.work, ignore_errors=True)


@contextlib.contextmanager
def driver_session(**options):
    """A started cluster (NamespaceRayCluster(**options)) that this process drives: authenticated
    with the cluster's token and connected once the head answers and both nodes are alive; on
    exit ray.shutdown(), the process's own auth restored and every node and host removed.
    Raises NotPermitted where namespaces cannot be made. One per test module."""
    import ray

    nodes = NamespaceRayCluster(**options)
    try:
        nodes.start()
        restore_auth = nodes.authenticate_this_process()
        try:
            _connect(ray, nodes)
            yield nodes
        finally:
            ray.shutdown()
            restore_auth()
    finally:
        nodes.cleanup()


def _connect(ray, nodes):
    """The driver joins the cluster once the head answers and both nodes are alive."""
    deadline = time.monotonic() + 120
    while True:
        try:
            ray.init(address=nodes.address, log_to_driver=False)
            break
        except Exception:
            if time.monotonic() > deadline or any(n.poll() is not None for n in nodes.nodes):
                raise AssertionError(f"the Ray head never answered:\n{nodes.log(1)}")
            time.sleep(1)
    while len([n for n in ray.nodes() if n["Alive"]]) < 2:
        if time.monotonic() > deadline:
            raise AssertionError(f"the second Ray node never joined:\n{nodes.log(2)}")
        time.sleep(0.5)


def _reload_ray_auth():
    from ray._raylet import AuthenticationTokenLoader, Config

    Config.initialize("")
    AuthenticationTokenLoader.instance().reset_cache()


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f"{pid}: " + f.read().replace(b"\0", b" ").decode(errors="replace")[:200]
    except OSError:
        return f"{pid}: (gone)"

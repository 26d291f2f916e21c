"""runrun.torch against torch.distributed's gloo backend, side by side in one run.

Why: issue 10 asks whether runrun over Gloo is at least as fast as torch.distributed over Gloo
on the same tensors. A benchmark, never a test: it asserts nothing about time.

Usage (from the repository root, runrun's package importable):
    runrun --gloo -np 2 python3 tests/perf/torch_side_by_side.py [--json] [--sizes 4,1M,64M]
    runrun --mpi  -np 2 python3 tests/perf/torch_side_by_side.py ...

Each rank initializes runrun (whichever backend the launcher mode gives it) and a torch
process group with backend "gloo" over a TCPStore that rank 0 opens on a free port; the port
(and rank 0's address) reach the other ranks through a runrun broadcast. Then, for every case:
- both sides' results are checked against the locally computed sum (and so against each other)
  before anything is timed; a wrong result ends the run with exit 1;
- warm-up blocks, then timed blocks alternating the sides block by block (rotating which goes
  first); each block starts after a torch barrier and runs `batch` back-to-back calls of one
  side (50 for 4 B, 1 from 1 MiB up); its time per call is the slowest rank's;
- reported: median and minimum over blocks per side, and runrun / torch of both.
Cases: one float32 sum allreduce per size (runrun: hvd.allreduce_(t, op=hvd.Sum), in place as
torch's dist.all_reduce is; --out-of-place adds hvd.allreduce, which allocates its output), and
"many": --many-count tensors of --many-bytes, all started (hvd.allreduce_async_ /
dist.all_reduce(async_op=True)), then all waited (hvd.synchronize / work.wait()); with --mlp,
a training step of a synthetic MLP (--mlp-width wide, 3 layers, a batch of 64 per rank):
hvd.DistributedOptimizer against DistributedDataParallel, both from the same weights, checked to
reach the same weights after one step before anything is timed.
Thread-safety: a script; one thread drives both libraries.
"""

import argparse
import copy
import datetime
import fcntl
import ipaddress
import json
import os
import socket
import statistics
import struct
import sys
import time

import torch
import torch.distributed as dist

import runrun.torch as hvd

MIN_ITERS = 5


def parse_bytes(text):
    text = text.strip().upper()
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    number = text[:-1] if scale > 1 else text
    if not number.isdigit():
        raise SystemExit(f"torch_side_by_side: '{text}' is not a size like 4, 1K, 64M")
    return int(number) * scale


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.add_argument("--sizes", default="4,1M,64M", help="allreduce sizes in bytes (4,1K,64M)")
    p.add_argument("--many-count", type=int, default=100, help="tensors of the async case")
    p.add_argument("--many-bytes", default="1K", help="bytes of each tensor of the async case")
    p.add_argument("--iters", type=int, default=20, help="timed blocks per side")
    p.add_argument("--warmup", type=int, default=3, help="untimed blocks per side")
    p.add_argument("--budget", type=float, default=3.0,
                   help="seconds per case after which timing stops (at least 5 blocks)")
    p.add_argument("--out-of-place", action="store_true",
                   help="also time hvd.allreduce (allocates its output)")
    p.add_argument("--timeout", type=float, default=300, help="torch store/process group timeout s")
    p.add_argument("--mlp", action="store_true",
                   help="also time a training step: DistributedOptimizer against DDP")
    p.add_argument("--mlp-width", type=int, default=1024, help="hidden width of the MLP")
    return p.parse_args()


def interface_addresses():
    """{interface name: IPv4 address} of this host's interfaces that have one."""
    found = {}
    for name in sorted(os.listdir("/sys/class/net")):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            packed = fcntl.ioctl(s.fileno(), 0x8915,  # SIOCGIFADDR
                                 struct.pack("256s", name.encode()[:15]))
            found[name] = socket.inet_ntoa(packed[20:24])
        except OSError:
            pass
        finally:
            s.close()
    return found


def runrun_network():
    """(interface name, address) of the network runrun's ranks use: RUNRUN_NETWORK_INTERFACE
    or Open MPI's btl_tcp_if_include (an interface name or a CIDR block, as the launcher's
    --network-interface gives them), else
    the route to the launcher's rendezvous server; (None, None) when neither says. Host names
    need not resolve between hosts (network-namespace hosts), so torch is given addresses."""
    addresses = interface_addresses()
    spec = (os.environ.get("RUNRUN_NETWORK_INTERFACE") or  # runrun --gloo
            os.environ.get("OMPI_MCA_btl_tcp_if_include") or "")  # --mpi: mpirun's --mca
    for item in filter(None, spec.split(",")):
        if item in addresses:
            return item, addresses[item]
        try:
            block = ipaddress.ip_network(item, strict=False)
        except ValueError:
            continue
        for name, address in addresses.items():
            if ipaddress.ip_address(address) in block:
                return name, address
    target = os.environ.get("RUNRUN_RENDEZVOUS_ADDR")
    if not target:
        return None, None
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect((target, int(os.environ.get("RUNRUN_RENDEZVOUS_PORT", "9"))))
        address = probe.getsockname()[0]
    finally:
        probe.close()
    name = next((n for n, a in addresses.items() if a == address), None)
    return name, address


def init_torch_gloo(timeout_s):
    """torch.distributed over gloo; rank 0's TCPStore port agreed through runrun."""
    rank, size = hvd.rank(), hvd.size()
    one_host = hvd.local_size() == size
    timeout = datetime.timedelta(seconds=timeout_s)
    if one_host:
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")  # as runrun's own ranks: loopback
        address = "127.0.0.1"
    else:
        interface, address = runrun_network()
        if interface:
            os.environ.setdefault("GLOO_SOCKET_IFNAME", interface)
    store = None
    if rank == 0:
        host = "127.0.0.1" if one_host else (address or socket.getfqdn())
        store = dist.TCPStore("0.0.0.0" if not one_host else host, 0, size, True, timeout,
                              wait_for_workers=False)
        where = (host, store.port)
    else:
        where = None
    host, port = hvd.broadcast_object(where, root_rank=0, name="torch_side_by_side.store")
    if rank != 0:
        store = dist.TCPStore(host, port, size, False, timeout)
    dist.init_process_group("gloo", store=store, rank=rank, world_size=size, timeout=timeout)


def slowest(seconds):
    t = torch.tensor([seconds], dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return float(t.item())


def time_block(side, batch):
    dist.barrier()
    start = time.perf_counter()
    for _ in range(batch):
        side()
    return slowest((time.perf_counter() - start) / batch)


def time_sides(sides, batch, args):
    """Per side, its per-call times in microseconds (alternating blocks, rotating the order)."""
    for _ in range(args.warmup):
        for side in sides:
            time_block(side, 1)
    us = [[] for _ in sides]
    spent = 0.0
    for it in range(args.iters):
        for k in range(len(sides)):
            s = (k + it) % len(sides)
            per_call = time_block(sides[s], batch)
            us[s].append(per_call * 1e6)
            spent += per_call * batch
        if it + 1 >= MIN_ITERS and spent > args.budget:
            break
    return us


def summary(us):
    return {"median": statistics.median(us), "min": min(us), "n": len(us)}


def check(tensors, expected, what):
    for i, (t, want) in enumerate(zip(tensors, expected)):
        if not torch.equal(t, want):
            bad = (t != want).nonzero()[0].item()
            raise SystemExit(f"torch_side_by_side rank {hvd.rank()}: {what}, tensor {i}: element "
                             f"{bad} is {t.view(-1)[bad].item()}, expected "
                             f"{want.view(-1)[bad].item()} (results are checked before timing; "
                             f"a wrong result is a bug of that side)")


def fill(tensors):
    for i, t in enumerate(tensors):
        t.fill_(float(i % 7 + 1 + hvd.rank()))


def expected_sums(tensors):
    n = hvd.size()
    return [torch.full_like(t, float(n * (i % 7 + 1) + n * (n - 1) // 2))
            for i, t in enumerate(tensors)]


def make_sides(tensors, name, args):
    """(label, side) pairs; each side reduces every tensor of `tensors` in place (sum)."""
    single = len(tensors) == 1

    def runrun_side():
        if single:
            hvd.allreduce_(tensors[0], op=hvd.Sum, name=name)
            return
        handles = [hvd.allreduce_async_(t, op=hvd.Sum, name=f"{name}.{i}")
                   for i, t in enumerate(tensors)]
        for h in handles:
            hvd.synchronize(h)

    def torch_side():
        if single:
            dist.all_reduce(tensors[0])
            return
        works = [dist.all_reduce(t, async_op=True) for t in tensors]
        for w in works:
            w.wait()

    def runrun_oop_side():
        # The output is a new tensor (kept for the check); the input stays as it was.
        runrun_oop_side.last = [hvd.allreduce(tensors[0], op=hvd.Sum, name=f"{name}.oop")]

    sides = [("runrun", runrun_side), ("torch", torch_side)]
    if args.out_of_place and single:
        sides.append(("runrun_oop", runrun_oop_side))
    return sides


def verify(tensors, sides, what):
    want = expected_sums(tensors)
    for label, side in sides:
        fill(tensors)
        side()
        got = side.last if label == "runrun_oop" else tensors
        check(got, want, f"{what} ({label})")
    for t in tensors:
        t.zero_()  # timed sums of zeros never overflow and stay comparable


def run_case(op, tensors, batch, args, emit):
    name = f"sbs.{op}.{tensors[0].numel()}x{len(tensors)}"
    sides = make_sides(tensors, name, args)
    verify(tensors, sides, name)
    times = time_sides([s for _, s in sides], batch, args)
    result = {"op": op, "bytes": sum(t.numel() * t.element_size() for t in tensors),
              "tensors": len(tensors), "ranks": hvd.size(), "batch": batch}
    stats = {label: summary(us) for (label, _), us in zip(sides, times)}
    for label, s in stats.items():
        result[f"{label}_us"] = round(s["median"], 3)
        result[f"{label}_min_us"] = round(s["min"], 3)
        result["iters"] = s["n"]
    result["ratio"] = round(stats["runrun"]["median"] / stats["torch"]["median"], 4)
    result["ratio_min"] = round(stats["runrun"]["min"] / stats["torch"]["min"], 4)
    emit(result)


def run_mlp(args, emit):
    """A training step of the same MLP on both sides: hvd.DistributedOptimizer (gradients
    averaged by runrun as backward produces them) against DistributedDataParallel."""
    torch.manual_seed(0)
    width = args.mlp_width
    base = torch.nn.Sequential(torch.nn.Linear(784, width), torch.nn.ReLU(),
                               torch.nn.Linear(width, width), torch.nn.ReLU(),
                               torch.nn.Linear(width, 10))
    ours, theirs = copy.deepcopy(base), copy.deepcopy(base)
    optimizer = hvd.DistributedOptimizer(torch.optim.SGD(ours.parameters(), lr=0.01),
                                         named_parameters=ours.named_parameters())
    ddp = torch.nn.parallel.DistributedDataParallel(theirs)
    ddp_optimizer = torch.optim.SGD(ddp.parameters(), lr=0.01)
    generator = torch.Generator().manual_seed(1 + hvd.rank())
    x = torch.randn(64, 784, generator=generator)
    y = torch.randint(0, 10, (64,), generator=generator)
    loss_fn = torch.nn.CrossEntropyLoss()

    def runrun_step():
        optimizer.zero_grad()
        loss_fn(ours(x), y).backward()
        optimizer.step()

    def torch_step():
        ddp_optimizer.zero_grad()
        loss_fn(ddp(x), y).backward()
        ddp_optimizer.step()

    runrun_step()
    torch_step()
    for (name, a), b in zip(ours.named_parameters(), theirs.parameters()):
        if not torch.allclose(a, b, rtol=1e-4, atol=1e-6):
            raise SystemExit(f"torch_side_by_side rank {hvd.rank()}: after one MLP step, {name} "
                             f"differs between runrun and DDP by {(a - b).abs().max().item()} "
                             f"(checked before timing; one side averages wrongly)")
    times = time_sides([runrun_step, torch_step], 1, args)
    params = list(ours.parameters())
    result = {"op": "mlp_step", "bytes": sum(p.numel() * p.element_size() for p in params),
              "tensors": len(params), "ranks": hvd.size(), "batch": 1}
    stats = [summary(us) for us in times]
    for label, st in zip(("runrun", "torch"), stats):
        result[f"{label}_us"] = round(st["median"], 3)
        result[f"{label}_min_us"] = round(st["min"], 3)
        result["iters"] = st["n"]
    result["ratio"] = round(stats[0]["median"] / stats[1]["median"], 4)
    result["ratio_min"] = round(stats[0]["min"] / stats[1]["min"], 4)
    emit(result)


def human(nbytes):
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale and nbytes % scale == 0:
            return f"{nbytes // scale} {unit}"
    return f"{nbytes} B"


def make_emitter(args, rank):
    header_done = []

    def emit(row):
        if rank != 0:
            return
        if args.json:
            print(json.dumps(row), flush=True)
            return
        if row["op"] == "run":
            print(f"# torch_side_by_side: {row['ranks']} ranks, runrun backend {row['backend']}, "
                  f"torch {row['torch']} (gloo), runrun / torch per case", flush=True)
            return
        if not header_done:
            header_done.append(True)
            print(f"{'case':<12} {'bytes':>10} {'tensors':>7} {'runrun med (min) us':>22} "
                  f"{'torch med (min) us':>22} {'ratio':>6} {'min/min':>7}", flush=True)
        label = ("mlp step" if row["op"] == "mlp_step" else
                 "allreduce" if row["tensors"] == 1 else "many async")
        rr = f"{row['runrun_us']:.1f} ({row['runrun_min_us']:.1f})"
        tt = f"{row['torch_us']:.1f} ({row['torch_min_us']:.1f})"
        line = (f"{label:<12} {human(row['bytes']):>10} {row['tensors']:>7} {rr:>22} {tt:>22} "
                f"{row['ratio']:>6.2f} {row['ratio_min']:>7.2f}")
        if "runrun_oop_us" in row:
            line += (f"   out-of-place runrun {row['runrun_oop_us']:.1f}"
                     f" ({row['runrun_oop_min_us']:.1f})")
        print(line, flush=True)

    return emit


def main():
    args = parse_args()
    hvd.init()
    rank = hvd.rank()
    env_rank = os.environ.get("RUNRUN_RANK")
    if env_rank is not None and int(env_rank) != rank:
        raise SystemExit(f"torch_side_by_side: runrun says rank {rank}, RUNRUN_RANK={env_rank}")
    init_torch_gloo(args.timeout)
    emit = make_emitter(args, rank)
    backend = "gloo" if hvd.gloo_enabled() else ("mpi" if hvd.mpi_enabled() else "?")
    emit({"op": "run", "ranks": hvd.size(), "backend": backend, "torch": torch.__version__,
          "cycle_time_ms": os.environ.get("RUNRUN_CYCLE_TIME_MS", "default"),
          "fusion_threshold": os.environ.get("RUNRUN_FUSION_THRESHOLD", "default")})
    for nbytes in (parse_bytes(s) for s in args.sizes.split(",") if s):
        count = max(1, nbytes // 4)
        batch = max(1, min(50, (1 << 20) // (count * 4)))
        run_case("allreduce", [torch.zeros(count, dtype=torch.float32)], batch, args, emit)
    if args.many_count > 0:
        count = max(1, parse_bytes(args.many_bytes) // 4)
        tensors = [torch.zeros(count, dtype=torch.float32) for _ in range(args.many_count)]
        run_case("allreduce.many", tensors, 1, args, emit)
    if args.mlp:
        run_mlp(args, emit)
    dist.barrier()
    dist.destroy_process_group()
    hvd.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""runrun.run: Horovod's `horovod.run(func, args, kwargs, num_proc=...)` — start a job of
`num_proc` ranks that each call `func(*args, **kwargs)`, and return their results in rank order.

Why: scripts and libraries (Horovod's examples' `--num-proc` path, notebooks, Ray/Spark glue)
launch training from Python instead of the command line. This runs the `runrun` launcher with
the flags the arguments map to; each rank runs `python -m runrun.run_task`, which decodes the
function from the environment (cloudpickle, base64, in chunks of at most 96 KiB: an execve
limit; the launcher forwards them by name, so they reach every host, never a command line) and
prints its pickled result as one marked line on stdout, which this process reads from the
launcher's tagged output (so no shared file system is needed). Other output is passed through.
A rank that fails, or a launcher that exits with a failure, raises RuntimeError naming the exit
status. Thread-safety: any thread; the call blocks until the job ends.
"""

import base64
import os
import shutil
import subprocess
import sys
import warnings

from runrun.common import object_codec

# The rank side's marker (runrun.run_task writes it) and the environment names of the payload.
RESULT_MARKER = "@@runrun-run-result@@"
PAYLOAD_ENV = "RUNRUN_RUN_FUNCTION"
_CHUNK = 96 * 1024
_MAX_CHUNKS = 16  # 1.5 MiB: the environment of a process shares ARG_MAX (2 MiB) with argv


def _launcher():
    """The `runrun` launcher: $RUNRUN_LAUNCHER, the one on PATH, or the one beside this
    interpreter (a virtualenv's bin/)."""
    found = os.environ.get("RUNRUN_LAUNCHER") or shutil.which("runrun")
    if not found:
        beside = os.path.join(os.path.dirname(sys.executable), "runrun")
        found = beside if os.access(beside, os.X_OK) else None
    if not found:
        raise RuntimeError("runrun.run: the runrun launcher was not found (not on PATH, not "
                           f"beside {sys.executable}); set RUNRUN_LAUNCHER to its path")
    return found


def _payload_env(func, args, kwargs):
    data = base64.b64encode(object_codec.dumps((func, tuple(args), dict(kwargs)))).decode()
    chunks = [data[i:i + _CHUNK] for i in range(0, len(data), _CHUNK)] or [""]
    if len(chunks) > _MAX_CHUNKS:
        raise ValueError(
            f"runrun.run: the pickled function and its arguments take {len(data)} bytes, more "
            f"than {_CHUNK * _MAX_CHUNKS} can travel in the ranks' environment; pass a path "
            "and load large data inside the function instead")
    env = {f"{PAYLOAD_ENV}_{i}": chunk for i, chunk in enumerate(chunks)}
    env[f"{PAYLOAD_ENV}_CHUNKS"] = str(len(chunks))
    return env


def _flags(num_proc, min_num_proc, max_num_proc, slots, reset_limit, cooldown_range, hosts,
           hostfile, start_timeout, ssh_port, ssh_identity_file, output_filename, verbose,
           use_gloo, use_mpi, mpi_args, network_interface):
    flags = ["-np", str(num_proc)]
    for flag, value in (("--min-np", min_num_proc), ("--max-np", max_num_proc),
                        ("--slots-per-host", slots), ("--reset-limit", reset_limit),
                        ("-H", hosts), ("--hostfile", hostfile),
                        ("--start-timeout", start_timeout), ("-p", ssh_port),
                        ("-i", ssh_identity_file), ("--output-filename", output_filename),
                        ("--mpi-args", mpi_args), ("--network-interface", network_interface)):
        if value is not None:
            flags += [flag, str(value)]
    if cooldown_range is not None:
        low, high = cooldown_range
        flags += ["--blacklist-cooldown-range", str(low), str(high)]
    if verbose:
        flags.append("--verbose")
    if use_gloo:
        flags.append("--gloo")
    if use_mpi:
        flags.append("--mpi")
    return flags


def _result_of(line, results):
    """Records the result a rank's marked line carries; False for any other line."""
    _, _, tagged = line.partition("<stdout>:")
    if not tagged.startswith(RESULT_MARKER):
        return False
    rank, _, data = tagged[len(RESULT_MARKER):].strip().partition(" ")
    results[int(rank)] = object_codec.loads(base64.b64decode(data))
    return True


def run(func, args=(), kwargs=None, num_proc=1, min_num_proc=None, max_num_proc=None,
        slots=None, reset_limit=None, cooldown_range=None, hosts=None, hostfile=None,
        start_timeout=None, ssh_port=None, ssh_identity_file=None, disable_cache=None,
        output_filename=None, verbose=None, use_gloo=None, use_mpi=None, mpi_args=None,
        network_interface=None, executable=None, np=None, min_np=None, max_np=None):
    """Horovod's horovod.run, with its arguments: runs `func(*args, **kwargs)` on `num_proc`
    ranks (`func` calls init() itself, as under horovod.run) and returns the list of their
    return values, index = rank. `np`, `min_np`, `max_np` are Horovod's deprecated spellings;
    `disable_cache` is accepted and ignored (runrun caches no checks); `executable` is the
    ranks' Python (default: this interpreter)."""
    del disable_cache
    if np is not None:
        if num_proc == 1:
            num_proc = np
        warnings.warn("np is deprecated, use num_proc instead", DeprecationWarning, stacklevel=2)
    if min_np is not None:
        min_num_proc = min_num_proc if min_num_proc is not None else min_np
        warnings.warn("min_np is deprecated, use min_num_proc instead", DeprecationWarning,
                      stacklevel=2)
    if max_np is not None:
        max_num_proc = max_num_proc if max_num_proc is not None else max_np
        warnings.warn("max_np is deprecated, use max_num_proc instead", DeprecationWarning,
                      stacklevel=2)
    if hosts is not None and hostfile is not None:
        raise ValueError("runrun.run: pass hosts or hostfile, not both")
    if use_gloo and use_mpi:
        raise ValueError("runrun.run: use_gloo and use_mpi cannot both be True")
    command = [_launcher()] + _flags(
        num_proc, min_num_proc, max_num_proc, slots, reset_limit, cooldown_range, hosts,
        hostfile, start_timeout, ssh_port, ssh_identity_file, output_filename, verbose,
        use_gloo, use_mpi, mpi_args, network_interface)
    command += [executable or sys.executable, "-m", "runrun.run_task"]
    env = dict(os.environ)
    env.update(_payload_env(func, args, kwargs or {}))
    results = {}
    with subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True,
                          errors="replace") as launcher:
        for line in launcher.stdout:
            if not _result_of(line, results):
                sys.stdout.write(line)
                sys.stdout.flush()
        status = launcher.wait()
    if status != 0:
        raise RuntimeError(f"runrun.run: the job failed: the launcher exited with status "
                           f"{status} (its messages above name the rank and the reason)")
    missing = [r for r in range(max(results, default=-1) + 1) if r not in results]
    if not results or missing:
        raise RuntimeError(f"runrun.run: the job ended without the results of ranks "
                           f"{missing or 'all'}")
    return [results[r] for r in sorted(results)]

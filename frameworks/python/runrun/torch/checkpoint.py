"""save_checkpoint / load_checkpoint: one file per job, written by one rank, loaded by one rank
and broadcast to the others (ChainerMN's checkpointer without per-rank files).

Why: in data-parallel training every rank holds the same model and optimizer state, so one
copy suffices and a job can resume at a different number of ranks. The file is written
atomically (runrun.common.checkpoint_file) with the saving job's topology. Thread-safety:
collective over `process_set`; call from one thread on every member.
"""

import os

import torch

from runrun.common import basics
from runrun.common import checkpoint_file as files
from runrun.common.exceptions import InvalidArgumentError
from runrun.common.process_sets import global_process_set
from runrun.torch.functions import (
    broadcast_object,
    broadcast_optimizer_state,
    broadcast_parameters,
)


def _check_member(what, root_rank, process_set):
    if not process_set.included():
        raise InvalidArgumentError(f"{what}: rank {basics.rank()} is not a member of "
                                   f"{process_set}; only its members call it")
    if root_rank not in process_set.ranks:
        raise InvalidArgumentError(f"{what}: root_rank={root_rank} is not a member of "
                                   f"{process_set} (root_rank is a global rank)")


def _write(path, model, optimizer, state, process_set):
    payload = {
        "format": files.FORMAT,
        "version": files.VERSION,
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict() if optimizer is not None else None,
        "state": state,
        "topology": files.topology_record(len(process_set.ranks), basics.local_size(),
                                          basics.cross_size(), process_set.ranks),
    }
    files.atomic_write(path, lambda f: torch.save(payload, f))


def save_checkpoint(path, model, optimizer=None, root_rank=0, process_set=global_process_set,
                    **state):
    """Collective. root_rank writes model.state_dict(), optimizer.state_dict(), `state` (any
    picklable keywords, e.g. step=, epoch=) and the topology to `path`, atomically; every rank
    returns once the file is in place, or raises the root's error. A double-buffered
    optimizer must be flush()ed first (its pending gradient is in no state_dict)."""
    _check_member("save_checkpoint", root_rank, process_set)
    if getattr(optimizer, "has_pending_gradients", False):
        raise InvalidArgumentError(
            "save_checkpoint: the double-buffered optimizer holds a pending averaged gradient; "
            "call optimizer.flush() before saving so that it is not lost")
    error = None
    if basics.rank() == root_rank:
        try:
            _write(path, model, optimizer, state, process_set)
        except Exception as e:  # every rank must hear of it
            error = f"{type(e).__name__}: {e}"
    error = broadcast_object(error, root_rank, "save_checkpoint.status", process_set)
    if error:
        raise RuntimeError(f"save_checkpoint: rank {root_rank} could not write {path}: {error}")
    return path


def _read_on_root(path, model, optimizer):
    """(header, error): loads the file into the root's model and optimizer."""
    if not os.path.exists(path):
        return {"missing": True}, None
    try:
        payload = torch.load(path, map_location="cpu", weights_only=False)
        if not isinstance(payload, dict) or payload.get("format") != files.FORMAT:
            return None, f"{path} is not a runrun checkpoint (written by save_checkpoint)"
        model.load_state_dict(payload["model"])
        if optimizer is not None:
            if payload["optimizer"] is None:
                return None, f"{path} was saved without an optimizer; pass optimizer=None"
            optimizer.load_state_dict(payload["optimizer"])
    except Exception as e:
        return None, f"reading {path} failed: {type(e).__name__}: {e}"
    return {"missing": False, "state": payload["state"], "topology": payload["topology"]}, None


def load_checkpoint(path, model, optimizer=None, root_rank=0, process_set=global_process_set,
                    rescale_lr=False, missing_ok=False):
    """Collective. root_rank reads `path` into its model and optimizer, then broadcasts
    parameters, buffers and optimizer state to every member. Returns a ResumeState: the saved
    keyword state (e.g. step) with .saved_size and .size. rescale_lr=True multiplies every
    group's lr by size / saved_size (linear scaling). A missing file raises
    FileNotFoundError on every rank, or returns None with missing_ok=True."""
    _check_member("load_checkpoint", root_rank, process_set)
    header = error = None
    if basics.rank() == root_rank:
        header, error = _read_on_root(path, model, optimizer)
    header, error = broadcast_object((header, error), root_rank, "load_checkpoint.header",
                                     process_set)
    if error:
        raise RuntimeError(f"load_checkpoint: rank {root_rank}: {error}")
    if header["missing"]:
        if missing_ok:
            return None
        raise FileNotFoundError(f"load_checkpoint: rank {root_rank} found no checkpoint at "
                                f"{path}")
    broadcast_parameters(model.state_dict(), root_rank, process_set)
    if optimizer is not None:
        broadcast_optimizer_state(optimizer, root_rank, process_set)
    resumed = files.ResumeState(header["state"], header["topology"], len(process_set.ranks))
    if rescale_lr and optimizer is not None:
        scale = files.lr_scale(resumed.saved_size, resumed.size)
        for group in optimizer.param_groups:
            group["lr"] = group["lr"] * scale
    return resumed

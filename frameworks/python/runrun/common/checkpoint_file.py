"""Framework-neutral half of checkpoints: the atomic file write and the topology record.

Why: a checkpoint written in place can be left half-written by a crash or a full disk, and the
next resume then fails or, worse, loads garbage. The file is written beside its final path,
flushed to disk, then renamed over it (a rename within a directory is atomic on POSIX), so a
reader sees the old checkpoint or the new one, never a mix. The topology record says with how
many ranks it was written, so a resume at another size can adapt (learning rate, sampler).
Thread-safety: one writer per path (the checkpoint's root rank).
"""

import os
import tempfile

FORMAT = "runrun checkpoint"
VERSION = 1


def atomic_write(path, write):
    """Calls write(file object) on a temporary file in path's directory, then renames it to
    `path`. On any failure the temporary file is removed and `path` is left as it was."""
    path = os.path.abspath(os.fspath(path))
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp",
                               dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    _sync_directory(directory)
    return path


def _sync_directory(directory):
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return  # not every filesystem lets a directory be opened; the rename still happened
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def topology_record(size, local_size, cross_size, set_ranks):
    """What a checkpoint records about the job that wrote it."""
    return {"size": int(size), "local_size": int(local_size), "cross_size": int(cross_size),
            "process_set_ranks": list(set_ranks)}


def lr_scale(saved_size, size):
    """Linear scaling rule: the factor for a learning rate tuned as base_lr * number of ranks
    when a job saved at `saved_size` ranks resumes at `size`."""
    return size / saved_size


class ResumeState(dict):
    """The keyword state saved with the checkpoint (e.g. step, epoch), plus `topology` (the
    saving job's, see topology_record), `saved_size` and `size` (the process set's size when
    saved and now)."""

    def __init__(self, state, topology, size):
        super().__init__(state)
        self.topology = topology
        self.saved_size = topology["size"]
        self.size = size

    @property
    def size_changed(self):
        return self.saved_size != self.size

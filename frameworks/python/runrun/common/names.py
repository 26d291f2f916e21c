"""Names of unnamed ops. The members of a process set must enqueue its ops in the same order;
an op without a name gets `<op>.noname.<n>` (`<op>.set<id>.noname.<n>` in process set <id>)
from a counter per op and per set, so the n-th unnamed op of a set matches across its members,
and ops that only some ranks run in their own set (autograd's included) do not shift the
counters of the global set.

Shared by every adapter: the counters are per process, whichever framework enqueues. They start
again from 0 on every rank at init() (an elastic job's new workers and its survivors name alike:
an init hook, runrun.common.lifecycle) and for a set id when a set is added or removed (a set
id is reused: a rank that was a member of the set that had the id before must not carry its
count into the new set; runrun.common.process_sets calls forget()). Callers pass the set's id
(process_sets.process_set_id), which only an unnamed op needs.
Thread-safety: the counters are taken under a lock; any thread may name an op."""

import itertools
import threading

from runrun.common import lifecycle, loader
from runrun.common.exceptions import InvalidArgumentError

_lock = threading.Lock()
_counters = {}


def checked_name(op, name):
    """`name` as the str every rank must agree on, or InvalidArgumentError: the runtime carries
    names as C strings, so a NUL would cut them short ('c\\0X' and 'c\\0Y' would be one tensor)
    and a lone surrogate has no UTF-8 form."""
    text = str(name)
    if "\0" in text:
        raise InvalidArgumentError(
            f"{op}: the name {text!r} contains a NUL character (at {text.index(chr(0))}); "
            "tensor names are C strings: remove it")
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as error:
            raise InvalidArgumentError(
                f"{op}: the name {text!r} is not valid Unicode text ({error.reason} at "
                f"{error.start}); use a name that encodes as UTF-8") from None
    return text


def op_name(op, name, set_id=0):
    """`name` checked (checked_name), or the next `<op>[.set<set_id>].noname.<n>` when None."""
    if name is not None:
        text = str(name)
        # Checked inline for plain ASCII names: the per-gradient path counts its Python calls.
        return text if text.isascii() and "\0" not in text else checked_name(op, text)
    prefix = op if set_id == 0 else f"{op}.set{set_id}"
    with _lock:
        counter = _counters.setdefault((op, set_id), itertools.count())
        return f"{prefix}.noname.{next(counter)}"


def group_names(op, name, count, set_id=0):
    """Names of the tensors of a grouped op: `<name>.<i>`."""
    base = op_name(op, name, set_id)
    return [f"{base}.{i}" for i in range(count)]


def forget(set_id=None):
    """Restarts the counters of process set `set_id` (of every set when None) at 0. Called at
    init (a hook) and by add/remove_process_set, which every rank calls alike."""
    with _lock:
        for key in [k for k in _counters if set_id is None or k[1] == set_id]:
            del _counters[key]
    _forget_native(set_id)


def _forget_native(set_id):
    """runrun.jax's native jit path names its unnamed ops in _core (frameworks/csrc/xla_ffi.h):
    its counters restart with these."""
    try:
        forget_native = getattr(loader.core(), "xla_ffi_forget", None)
    except ImportError:  # no extension: nothing native to forget
        return
    if forget_native is not None:
        forget_native(-1 if set_id is None else int(set_id))


lifecycle.add_hooks(on_init=forget)  # every set's counters restart at every init()

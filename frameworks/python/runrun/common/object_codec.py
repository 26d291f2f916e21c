"""How the object collectives (broadcast_object, allgather_object) turn a Python object into
bytes and back: cloudpickle when it is importable, as Horovod (which requires it), else pickle.

Why: one codec for every adapter (runrun.tensorflow, runrun.torch), so a script that sends a
lambda or a class defined in a function under Horovod sends it here too when cloudpickle is
installed (the package requires it, as Horovod does; pickle is the fallback where it is
missing, e.g. a build tree on PYTHONPATH). cloudpickle's bytes are ordinary pickle
data that pickle.loads reads (cloudpickle must be importable where a function or class pickled
by value is loaded). Thread-safety: stateless.
"""

import pickle

try:
    import cloudpickle as _cloudpickle
except ImportError:  # pickle alone: module-level functions and classes only
    _cloudpickle = None

USES_CLOUDPICKLE = _cloudpickle is not None


def dumps(obj):
    """The bytes of `obj` (highest pickle protocol)."""
    if _cloudpickle is not None:
        return _cloudpickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    try:
        return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, AttributeError, TypeError) as e:
        raise type(e)(
            f"{e} (runrun pickles objects with pickle because cloudpickle is not installed; "
            "`pip install cloudpickle` to send lambdas and locally defined classes, as "
            "Horovod does)") from e


def loads(data):
    """The object of `data` (bytes or a buffer) made by dumps."""
    return pickle.loads(data)

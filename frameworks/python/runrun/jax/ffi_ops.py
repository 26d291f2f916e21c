"""The native path of runrun.jax inside jax.jit: each collective is one XLA custom call to
runrun's XLA FFI handler (frameworks/csrc/xla_ffi_handler.cc), which enqueues the op through
the C API and waits for it on the XLA thread: no Python runs per op (docs/jax.md).

Why it cannot deadlock and why names agree: the custom call carries JAX's ordered-IO effect,
the one ordered `io_callback`s carry. XLA threads that effect's token through every such
operation of a program (each custom call takes the token and returns the next one), and JAX
threads a runtime token between the executions it dispatches, so a process runs its jit
collectives one at a time, in program order and dispatch order: the order its Python program
gives, the same on every rank. The handler may then block its XLA thread until the op
completed (the runtime's background thread makes progress, the peers wait in the same op), and
an unnamed op is named when it runs, `<op>.jit.<n>` from a counter per op and process set (the
counters restart at init() and with set changes, as runrun.common.names' do), so a retrace, a
`.lower()` or a compile on one rank only cannot shift the names of the others. Errors (a shape
mismatch, a dead peer, a timeout) end the op with runrun's message; a dead peer ends it within
the runtime's peer and collective timeouts.

The effect and the lowering hook are jax internals (jax._src: the public ffi_call has no ordered
variant), so everything here is checked once: a jax without them, a _core built without the
XLA FFI header, a jaxlib that refuses the target, or RUNRUN_JAX_JIT_PATH=callback select the
io_callback path (jit_ops.py), with one warning when the native path was expected.

runrun --profile's step end is a second target, MARK_TARGET (mark()): a custom call with the
same ordered effect that takes the step's updated arrays as operands (so on the CPU it runs once
they are computed; on CUDA once the host reached it, docs/gpu.md; has_side_effect keeps XLA
from removing it) and records the time in native memory (frameworks/csrc/xla_ffi_profile.h): no
host callback in the profiled step.
The same target name is registered for the CPU and CUDA platforms (one handler each); lowering
for another platform raises UnsupportedError.
Thread-safety: enabled() takes a lock once; the rest runs while tracing or lowering.
"""

import functools
import os
import threading
import warnings

import jax
import numpy as np

from runrun.common import loader
from runrun.common.names import checked_name

TARGET = "runrun_collective"
MARK_TARGET = "runrun_profile_mark"
ALLREDUCE, GROUPED_ALLREDUCE, BROADCAST, ALLGATHER, ALLTOALL, REDUCESCATTER = range(6)
ENV_PATH = "RUNRUN_JAX_JIT_PATH"

_lock = threading.Lock()
_state = {}  # "enabled": bool once decided, "primitives": target name -> primitive


def _runtime_token_marker(*_args):
    """Never called: registered as the program's host callback so that JAX passes the runtime
    token to every execution of it. jax 0.10.2's C++ fast path for AOT-compiled functions
    (`jax.jit(f).lower(x).compile()(x)`) omits that token for a program with ordered effects
    but no host callback, and XLA then refuses the call ("supplied 1 arguments but compiled
    program expected 2"); io_callback programs have one."""
    return ()


def _setup():
    """The primitives (by target), or the reason the native path cannot be used."""
    info = getattr(loader.core(), "xla_ffi", None)
    if info is None:
        return None, ("runrun._core was built without the XLA FFI header (jax was not "
                      "installed when CMake configured); rebuild to get the native path")
    try:
        from jax._src import core as jcore
        from jax._src import dispatch
        from jax._src.callback import _OrderedIOEffect
        from jax._src.interpreters import mlir
    except (ImportError, AttributeError) as err:
        return None, f"this jax lacks the ordered-effect internals the native path uses ({err})"
    if "mark_target" not in info or "cuda_target" not in info:
        return None, ("runrun._core is older than runrun.jax (no profile mark or CUDA "
                      "target): rebuild")
    try:
        jax.ffi.register_ffi_target(TARGET, info["target"], platform="cpu")
        jax.ffi.register_ffi_target(MARK_TARGET, info["mark_target"], platform="cpu")
    except Exception as err:  # noqa: BLE001  (any refusal means: use the callback)
        return None, (f"jaxlib refused runrun's XLA FFI handler (built for XLA FFI API "
                      f"{info['api_version']}): {err}")
    platforms = {"cpu": None, "cuda": _register_cuda(info)}
    primitives = {}
    for target in (TARGET, MARK_TARGET):
        primitives[target] = _primitive(target, jcore, dispatch, _OrderedIOEffect, mlir,
                                        platforms)
    return primitives, None


def _register_cuda(info):
    """None once the CUDA handlers are registered (a jaxlib without CUDA keeps them for a CUDA
    plugin loaded later), else why not: ops inside jit on GPU arrays then fail with it."""
    try:
        jax.ffi.register_ffi_target(TARGET, info["cuda_target"], platform="CUDA")
        jax.ffi.register_ffi_target(MARK_TARGET, info["mark_target"], platform="CUDA")
    except Exception as err:  # noqa: BLE001
        return f"jaxlib refused runrun's XLA FFI handler for CUDA: {err}"
    return None


def _primitive(target, jcore, dispatch, effect, mlir, platforms):
    """The ordered, side-effecting primitive that lowers to the custom call of `target` on each
    platform of `platforms` whose value is None (XLA picks the handler registered for the
    platform it compiles for); on the others, and on ROCm and TPU, lowering raises why."""
    lower_ffi = jax.ffi.ffi_lowering(target, has_side_effect=True)
    primitive = jcore.Primitive(target)
    primitive.multiple_results = True

    def abstract_eval(*avals, result_avals, attrs):
        del avals, attrs
        return result_avals, {effect}

    def lowering(ctx, *args, result_avals, attrs):
        del result_avals
        if _runtime_token_marker not in ctx.module_context.host_callbacks:
            ctx.module_context.add_host_callback(_runtime_token_marker)
        token = ctx.tokens_in.get(effect)
        framed = ctx.replace(avals_in=(jcore.abstract_token, *ctx.avals_in),
                             avals_out=(jcore.abstract_token, *ctx.avals_out))
        token_out, *results = lower_ffi(framed, token, *args, **dict(attrs))
        ctx.set_tokens_out(ctx.tokens_in.update_tokens(mlir.TokenSet({effect: token_out})))
        return results

    primitive.def_effectful_abstract_eval(abstract_eval)
    # Bound on concrete arrays (jax.grad outside jit runs the forward rule eagerly): compiled
    # alone and run, as jax does for io_callback.
    primitive.def_impl(functools.partial(dispatch.apply_primitive, primitive))
    for platform in ("cpu", "cuda", "rocm", "tpu"):
        reason = platforms.get(platform, f"runrun has no XLA FFI handler for {platform}")
        rule = lowering if reason is None else functools.partial(_refuse, target, reason)
        mlir.register_lowering(primitive, rule, platform=platform)
    return primitive


_KIND_NAMES = ("allreduce", "grouped_allreduce", "broadcast", "allgather", "alltoall",
               "reducescatter")


def _refuse(target, reason, ctx, *args, result_avals, attrs):
    """The lowering of a platform without the handler: a clear error instead of jax's."""
    del ctx, args, result_avals
    from runrun.common.exceptions import UnsupportedError
    what = (_KIND_NAMES[int(dict(attrs)["kind"])] if target == TARGET
            else "runrun --profile's step mark")
    raise UnsupportedError(
        f"{what} inside jax.jit: {reason}; run the op outside jit, or set {ENV_PATH}=callback "
        "(the op then goes through the host)")


def enabled():
    """True when jit ops take the native path (decided once per process)."""
    decided = _state.get("enabled")
    if decided is not None:
        return decided
    with _lock:
        if "enabled" not in _state:
            choice = os.environ.get(ENV_PATH, "ffi").strip().lower() or "ffi"
            if choice not in ("ffi", "callback"):
                warnings.warn(f"{ENV_PATH}={choice!r} is not 'ffi' or 'callback'; using 'ffi'")
                choice = "ffi"
            primitives, reason = (None, None) if choice == "callback" else _setup()
            if reason is not None:
                warnings.warn(f"runrun.jax inside jax.jit falls back to io_callback (one Python "
                              f"round trip per op): {reason}", RuntimeWarning, stacklevel=3)
            _state["primitives"] = primitives
            _state["enabled"] = primitives is not None
    return _state["enabled"]


def call(kind, results, args, name=None, op=0, prescale=1.0, postscale=1.0, process_set=0,
         root_rank=0, profile=0):
    """The custom call of one op: `args` in, arrays shaped as `results` (ShapeDtypeStructs)
    out. name None means unnamed (named when it runs). profile: a profiler's id (0: none); the
    handler records the op's start and end for it (runrun --profile, profile_marks.py)."""
    from jax._src import core as jcore

    name_text = "" if name is None else checked_name("jit", name)
    attrs = (("kind", np.int32(kind)), ("name", name_text),
             ("op", np.int32(int(op))), ("prescale", np.float64(prescale)),
             ("postscale", np.float64(postscale)), ("process_set", np.int32(process_set)),
             ("root_rank", np.int32(root_rank)), ("profile", np.int32(profile)))
    avals = tuple(jcore.ShapedArray(r.shape, r.dtype) for r in results)
    return _state["primitives"][TARGET].bind(*args, result_avals=avals, attrs=attrs)


def mark(values, profiler_id):
    """runrun --profile's step end inside jit: records the time once `values` (arrays) are
    computed, for the profiler of id `profiler_id`."""
    attrs = (("profile", np.int32(profiler_id)),)
    _state["primitives"][MARK_TARGET].bind(*values, result_avals=(), attrs=attrs)

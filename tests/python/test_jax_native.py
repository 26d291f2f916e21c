"""runrun.jax's native path inside jax.jit (issue 12, point 3): every collective of a jitted
function is an XLA custom call to runrun's XLA FFI handler, not a Python callback, unless
RUNRUN_JAX_JIT_PATH=callback selects the io_callback fallback (docs/jax.md). The hard cases of
a native handler that blocks an XLA thread: independent ops in one program, many calls,
retraces with new shapes, eager and jit ops interleaved, a rank that traces alone. (Every op
and dtype inside jit: test_jax_collectives.py, which runs on whichever path is the default; a
dead peer: ctest jax.dead_peer_in_jit.*.)"""

import os
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

JIT_PATH = os.environ.get("RUNRUN_JAX_JIT_PATH", "ffi")


def exact(got, expected):
    got = np.asarray(got)
    assert got.dtype == expected.dtype and got.shape == expected.shape, (got, expected)
    assert np.array_equal(got, expected), (got, expected)


def test_jit_ops_lower_to_runrun_custom_calls(jhvd):
    """The lowered program of every op kind holds one custom call per op to the native target
    and no Python callback (on the default path)."""
    from runrun.jax import ffi_ops

    def every_op(a):
        return (jhvd.allreduce(a), jhvd.grouped_allreduce([a, a.astype(jnp.int32)]),
                jhvd.broadcast(a, 0), jhvd.allgather(a), jhvd.alltoall(a),
                jhvd.reducescatter(a))

    text = jax.jit(every_op).lower(jnp.ones((jhvd.size() * 2,))).as_text()
    assert JIT_PATH in ("ffi", "callback")
    if JIT_PATH == "ffi":
        assert ffi_ops.enabled()
        assert text.count(f"custom_call @{ffi_ops.TARGET}(") == 6, text
        assert "callback" not in text, text
    else:
        assert not ffi_ops.enabled() and "callback" in text


def _every_op(jhvd, a):
    return (jhvd.allreduce(a, op=jhvd.Sum, name="every.sum"),
            jhvd.grouped_allreduce([a, a.astype(jnp.int32)]), jhvd.broadcast(a, 0),
            jhvd.allgather(a), jhvd.alltoall(a), jhvd.reducescatter(a))


@pytest.mark.skipif(JIT_PATH != "ffi", reason="the callback path has no custom calls")
def test_jit_ops_lower_for_cuda_to_the_same_target(jhvd):
    """On GPU arrays (jax.jit lowered for CUDA, which needs no GPU to lower) every op is the same
    custom call, which XLA resolves to the CUDA handler registered under the same name: the
    attributes the CPU program carries, and no Python callback (docs/gpu.md "Inside jax.jit";
    the handler itself runs against fakes in ctest gpu.xla_ffi.gloo.np2)."""
    from runrun.jax import ffi_ops

    traced = jax.jit(lambda a: _every_op(jhvd, a)).trace(jnp.ones((jhvd.size() * 2,)))
    programs = {p: traced.lower(lowering_platforms=(p,)).as_text() for p in ("cpu", "cuda")}
    calls = {p: [line.split("mhlo.backend_config = ")[1].split("}")[0]
                 for line in text.splitlines() if f"custom_call @{ffi_ops.TARGET}(" in line]
             for p, text in programs.items()}
    assert len(calls["cuda"]) == 6 and calls["cuda"] == calls["cpu"], calls
    assert [c.split(",")[0] for c in calls["cuda"]] == [f"{{kind = {k} : i32" for k in range(6)]
    assert 'name = "every.sum"' in calls["cuda"][0]
    assert "callback" not in programs["cuda"]


@pytest.mark.skipif(JIT_PATH != "ffi", reason="the callback path lowers for every platform")
def test_jit_ops_on_a_platform_without_handler_say_what_to_do(jhvd, monkeypatch):
    """ROCm and TPU have no runrun handler, and a jaxlib that refuses the CUDA one leaves CUDA
    without: lowering raises UnsupportedError naming the op, the reason and the callback path
    (instead of jax's "MLIR translation rule ... not found")."""
    from runrun.common.exceptions import UnsupportedError
    from runrun.jax import ffi_ops

    traced = jax.jit(lambda a: jhvd.allgather(a)).trace(jnp.ones(2))
    with pytest.raises(UnsupportedError, match="allgather inside jax.jit: runrun has no XLA FFI "
                       "handler for rocm; .*RUNRUN_JAX_JIT_PATH=callback"):
        traced.lower(lowering_platforms=("rocm",))

    register = jax.ffi.register_ffi_target

    def refuse_cuda(name, fn, platform="cpu", **kwargs):
        if platform == "CUDA":
            raise RuntimeError("no CUDA here")
        return register(name, fn, platform=platform, **kwargs)

    saved = dict(ffi_ops._state)
    monkeypatch.setattr(jax.ffi, "register_ffi_target", refuse_cuda)
    ffi_ops._state.clear()
    try:
        assert ffi_ops.enabled()
        traced = jax.jit(lambda a: jhvd.allreduce(a)).trace(jnp.ones(2))
        with pytest.raises(UnsupportedError, match="allreduce inside jax.jit: jaxlib refused "
                           "runrun's XLA FFI handler for CUDA: no CUDA here"):
            traced.lower(lowering_platforms=("cuda",))
        exact(jax.jit(lambda a: jhvd.allreduce(a, op=jhvd.Sum))(jnp.ones(2)),
              np.full((2,), float(jhvd.size()), np.float32))
    finally:
        monkeypatch.undo()
        ffi_ops._state.clear()
        ffi_ops._state.update(saved)  # the primitives that lower for CUDA


def test_callback_fallback_is_selectable_and_exact(jhvd, monkeypatch):
    """RUNRUN_JAX_JIT_PATH=callback (read once per process: re-decided here) gives the
    io_callback path, with the same results and naming; then the default comes back."""
    from runrun.jax import ffi_ops

    n, r = jhvd.size(), jhvd.rank()
    saved = dict(ffi_ops._state)
    monkeypatch.setenv("RUNRUN_JAX_JIT_PATH", "callback")
    ffi_ops._state.clear()
    try:
        assert not ffi_ops.enabled()
        fn = jax.jit(lambda a: (jhvd.allreduce(a, op=jhvd.Sum), jhvd.allgather(a)))
        assert "custom_call @runrun_collective" not in fn.lower(jnp.ones(2)).as_text()
        total, gathered = fn(jnp.full((2,), float(r)))
        exact(total, np.full((2,), float(sum(range(n))), np.float32))
        exact(gathered, np.repeat(np.arange(n, dtype=np.float32), 2))
    finally:
        ffi_ops._state.clear()
        ffi_ops._state.update(saved)


def test_without_the_native_handler_warns_once_and_uses_the_callback(jhvd, monkeypatch):
    """A _core built without the XLA FFI header (no jax at configure time): one warning that
    says so, then the callback path."""
    import types

    from runrun.jax import ffi_ops

    saved = dict(ffi_ops._state)
    monkeypatch.delenv("RUNRUN_JAX_JIT_PATH", raising=False)
    monkeypatch.setattr(ffi_ops.loader, "core", lambda: types.SimpleNamespace())
    ffi_ops._state.clear()
    try:
        with pytest.warns(RuntimeWarning, match="built without the XLA FFI header"):
            assert not ffi_ops.enabled()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert not ffi_ops.enabled()  # decided once: no second warning
        text = jax.jit(lambda a: jhvd.allreduce(a)).lower(jnp.ones(2)).as_text()
        assert "custom_call @runrun_collective" not in text and "callback" in text
    finally:
        ffi_ops._state.clear()
        ffi_ops._state.update(saved)


def test_aot_compiled_function_runs_repeatedly(jhvd):
    """jax.jit(f).lower(x).compile(): the Compiled object called several times (JAX's AOT fast
    path must still pass the ordered effect's runtime token)."""
    n, r = jhvd.size(), jhvd.rank()
    compiled = jax.jit(lambda a: jhvd.allreduce(a, op=jhvd.Sum)).lower(jnp.ones(2)).compile()
    for step in range(3):
        exact(compiled(jnp.full((2,), float(r + step))),
              np.full((2,), float(sum(range(n)) + n * step), np.float32))


def test_two_independent_allreduces_called_many_times(jhvd):
    """No data dependence between the two ops, 50 calls with new values each, some inputs
    late on one rank: each call's results are its own (no op paired with another call's)."""
    n, r = jhvd.size(), jhvd.rank()
    side = 300 if r == n - 1 else 3

    @jax.jit
    def two(a, big):
        late = (big @ big)[0, :3] * 0 + a
        return jhvd.allreduce(late, op=jhvd.Sum), jhvd.allreduce(a * 2, op=jhvd.Max)

    big = jnp.ones((side, side))
    outs = [two(jnp.full((3,), float(r + step)), big) for step in range(50)]
    for step, (total, biggest) in enumerate(outs):
        exact(total, np.full((3,), float(sum(range(n)) + n * step), np.float32))
        exact(biggest, np.full((3,), 2.0 * (n - 1 + step), np.float32))


def test_retrace_with_new_shapes_and_dtypes(jhvd):
    """One jitted function retraced for new shapes and dtypes, and called again with the first
    shape (cached): unnamed ops keep matching across ranks."""
    n, r = jhvd.size(), jhvd.rank()
    fn = jax.jit(lambda a: (jhvd.allreduce(a, op=jhvd.Sum), jhvd.broadcast(a, n - 1)))
    for shape, dtype in (((3,), np.float32), ((5, 2), np.int32), ((3,), np.float32),
                         ((1, 1, 4), np.float16), ((5, 2), np.int32)):
        total, bcast = fn(jnp.full(shape, r + 1, dtype))
        exact(total, np.full(shape, sum(range(1, n + 1)), dtype))
        exact(bcast, np.full(shape, n, dtype))


def test_eager_and_jit_ops_interleaved(jhvd):
    """Unnamed eager ops and unnamed jit ops alternate (the jit ones dispatched
    asynchronously, so both kinds are in flight together): both namespaces stay in step."""
    n, r = jhvd.size(), jhvd.rank()
    jitted = jax.jit(lambda a: jhvd.allreduce(a, op=jhvd.Sum) + 1)
    pending = []
    for step in range(10):
        a = jnp.full((4,), float(r * step))
        pending.append(jitted(a))
        exact(jhvd.allreduce(a, op=jhvd.Max), np.full((4,), float((n - 1) * step), np.float32))
        exact(jhvd.allgather(a[:1]), np.arange(n, dtype=np.float32) * step)
    for step, out in enumerate(pending):
        exact(out, np.full((4,), float(sum(range(n)) * step + 1), np.float32))


def test_rank_that_traces_and_compiles_alone_does_not_shift_names(jhvd):
    """Rank 0 alone compiles (and runs nothing of) two more jitted functions with unnamed
    ops first; names are taken when ops run, so every rank still pairs them."""
    n, r = jhvd.size(), jhvd.rank()
    a = jnp.full((2,), float(r))
    if r == 0:
        jax.jit(lambda x: jhvd.allreduce(x) * 3).lower(a).compile()
        jax.jit(lambda x: jhvd.allgather(x)).lower(a).compile()
    fn = jax.jit(lambda x: (jhvd.allreduce(x, op=jhvd.Sum), jhvd.allreduce(x, op=jhvd.Min)))
    total, least = fn(a)
    exact(total, np.full((2,), float(sum(range(n))), np.float32))
    exact(least, np.zeros((2,), np.float32))


def test_grouped_every_dtype_inside_jit(jhvd):
    """One grouped custom call for a pytree of every dtype (one buffer per dtype)."""
    n, r = jhvd.size(), jhvd.rank()
    dtypes = [np.uint8, np.int8, np.int16, np.int32, np.float16, np.float32, jnp.bfloat16]
    xs = [jnp.full((3, 2), r + 1, d) for d in dtypes] + [jnp.array([r == 0, False])]
    outs = jax.jit(lambda t: jhvd.grouped_allreduce(t, op=jhvd.Sum))(xs)
    for d, out in zip(dtypes, outs):
        exact(out, np.full((3, 2), sum(range(1, n + 1)), d))
    exact(outs[-1], np.array([True, False]))


def test_shape_mismatch_inside_jit_names_the_op_then_works(jhvd):
    r = jhvd.rank()
    with pytest.raises(jax.errors.JaxRuntimeError, match="MismatchError.*native.mismatch"):
        jax.jit(lambda x: jhvd.allreduce(x, name="native.mismatch"))(
            jnp.ones(r + 1)).block_until_ready()
    exact(jax.jit(lambda x: jhvd.allreduce(x, op=jhvd.Sum))(jnp.ones(2)),
          np.full((2,), float(jhvd.size()), np.float32))

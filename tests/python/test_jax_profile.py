"""runrun --profile inside jax.jit (issue 14 point 1, its cost): on the native (ffi) path a
jitted optax step with runrun.jax.DistributedOptimizer makes NO host callback: the grouped
gradient allreduce marks "gradients ready/wait begins" and "wait ends" itself and the step end
is the native runrun_profile_mark custom call, both recorded in native memory and drained into
the profiler lazily; on the io_callback path the allreduce's own callback and one step-end
io_callback. Every step still gets its record with the same meaning, from the drain thread too
(runrun.jax.profile_marks). Structural: the callbacks are counted in the jaxpr and the lowered
program, not timed."""

import os
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from runrun.common import profile

JIT_PATH = os.environ.get("RUNRUN_JAX_JIT_PATH", "ffi")


@pytest.fixture
def profiler(monkeypatch):
    """A profiler as RUNRUN_PROFILE=1 makes one, for this test only (no output, no table)."""
    installed = profile.StepProfiler(interval=0)
    monkeypatch.setattr(profile, "_profiler", installed)
    monkeypatch.setattr(profile, "_checked", True)
    return installed


def _equations(jaxpr):
    """Every equation of `jaxpr` and of the jaxprs nested in its equations' parameters."""
    for eqn in jaxpr.eqns:
        yield eqn
        for value in eqn.params.values():
            for inner in value if isinstance(value, (tuple, list)) else (value,):
                inner = getattr(inner, "jaxpr", inner)
                if hasattr(inner, "eqns"):
                    yield from _equations(inner)


def _jitted_step(jhvd, rank):
    params = {"w": jnp.ones((16, 8)), "b": jnp.zeros((8,))}
    tx = jhvd.DistributedOptimizer(optax.sgd(0.01))
    x = jnp.asarray(np.random.default_rng(rank).normal(size=(4, 16)), jnp.float32)

    def step(p, s):
        grads = jax.grad(lambda q: jnp.mean((x @ q["w"] + q["b"]) ** 2))(p)
        updates, s = tx.update(grads, s, p)
        return optax.apply_updates(p, updates), s

    return step, params, tx.init(params)


def test_no_host_callback_in_a_jitted_step(jhvd, profiler):
    step, params, state = _jitted_step(jhvd, jhvd.rank())
    eqns = list(_equations(jax.make_jaxpr(step)(params, state).jaxpr))
    names = [e.primitive.name for e in eqns]
    if JIT_PATH == "ffi":
        # the allreduce is the native custom call, asked to record its times for this profiler;
        # the step end the native mark, after the update
        assert names.count("io_callback") == 0, names
        collectives = [e for e in eqns if e.primitive.name == "runrun_collective"]
        marks = [e for e in eqns if e.primitive.name == "runrun_profile_mark"]
        assert len(collectives) == 1 and len(marks) == 1, names
        assert dict(collectives[0].params["attrs"])["profile"] == profiler.id
        assert dict(marks[0].params["attrs"])["profile"] == profiler.id
        assert len(marks[0].invars) == 2  # the updates of w and b: it runs once they exist
        text = jax.jit(step).lower(params, state).as_text()
        targets = [line.split("custom_call @")[1].split("(")[0]
                   for line in text.splitlines() if "custom_call @" in line]
        assert sorted(targets) == ["runrun_collective", "runrun_profile_mark"], targets
    else:
        # the allreduce's own callback (which calls the hooks) + the step end
        assert names.count("io_callback") == 2, names


def test_jitted_steps_are_recorded_with_the_same_meaning(jhvd, profiler):
    step, params, state = _jitted_step(jhvd, jhvd.rank())
    step = jax.jit(step)
    steps = 6
    for _ in range(steps):
        params, state = step(params, state)
    jax.block_until_ready(params)
    grad_bytes = (16 * 8 + 8) * 4
    records = profiler.records()
    assert [r["step"] for r in records] == list(range(1, steps + 1))
    for r in records:
        assert r["bytes"] == grad_bytes, r
        assert r["step_s"] > 0 and r["compute_s"] > 0 and r["communication_s"] > 0, r
        assert r["hidden_s"] == 0 and r["exposed_s"] == r["communication_s"], r
        assert r["optimizer_s"] >= 0 and r["busbw_gbit"] >= 0, r
        assert r["compute_s"] + r["exposed_s"] + r["optimizer_s"] <= r["step_s"] + 1e-9, r


def test_profile_step_replays_the_native_records(jhvd, profiler):
    """A custom loop: allreduce_gradients inside jit, the step ended eagerly by
    hvd.profile_step(): the allreduce's times still reach that step's record."""
    x = jnp.arange(12.0).reshape(3, 4)

    @jax.jit
    def step(w):
        return w - 0.1 * jhvd.allreduce_gradients(jax.grad(lambda v: jnp.sum((x @ v) ** 2))(w))

    w = jnp.ones((4,))
    for _ in range(3):
        w = jax.block_until_ready(step(w))
        profile.profile_step()
    records = profiler.records()
    assert [r["bytes"] for r in records] == [16, 16, 16]
    assert all(r["communication_s"] > 0 for r in records), records


def test_drain_thread_builds_the_records(jhvd, profiler):
    """Nobody asks for the records: with --profile-interval 2 the native path's drain thread
    takes them once 2 steps are recorded (bounded wait, not a timing)."""
    profiler.interval = 2
    step, params, state = _jitted_step(jhvd, jhvd.rank())
    step = jax.jit(step)
    for _ in range(4):
        params, state = step(params, state)
    jax.block_until_ready(params)
    deadline = time.monotonic() + 60
    while len(profiler._steps) < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert [r["step"] for r in profiler._steps] == [1, 2, 3, 4]
    ends = [r["step_s"] for r in profiler._steps]
    assert all(t > 0 for t in ends), ends


def test_native_clock_is_the_profilers_clock(jhvd):
    from runrun.common import loader

    core = loader.core()
    if JIT_PATH != "ffi" or not hasattr(core, "xla_ffi_clock"):
        return  # the io_callback path reads time.perf_counter itself
    before = profile.time.perf_counter()
    native = core.xla_ffi_clock()
    assert before <= native <= profile.time.perf_counter()

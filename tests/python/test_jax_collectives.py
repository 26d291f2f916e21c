"""runrun.jax (issue 12, points 3 and 5): every op on jax.Arrays, eagerly and inside jax.jit,
for every dtype runrun takes (64-bit ones under jax.enable_x64), against a locally computed
reference; uneven allgather/alltoall outside jit; many independent ops in one jitted function
(ordered: no deadlock); names chosen when ops run, not when they are traced."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax_values import everyone, values

import runrun

DTYPES = ["uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64", "bool"]
WIDE = {"int64", "float64"}

REFERENCE = {
    runrun.Sum: lambda s: s.sum(0),
    runrun.Min: lambda s: s.min(0),
    runrun.Max: lambda s: s.max(0),
    runrun.Product: lambda s: s.prod(0),
}


def x64(dtype):
    """jax.enable_x64 around 64-bit dtypes (off by default in JAX)."""
    return jax.enable_x64(str(dtype) in WIDE)


def exact(out, expected, dtype):
    assert isinstance(out, jax.Array), type(out)
    assert out.dtype == jnp.dtype(dtype) and out.shape == expected.shape
    assert np.array_equal(np.asarray(out).astype(np.float64),
                          np.asarray(expected).astype(np.float64)), (out, expected)


def reference(op, parts, dtype):
    if dtype == "bool":  # Sum/Max: any, Min/Product: all
        stack = np.stack(parts)
        return stack.any(0) if op in (runrun.Sum, runrun.Max) else stack.all(0)
    return REFERENCE[op](np.stack(parts).astype(np.float64)).astype(jnp.dtype(dtype))


OPS = (runrun.Sum, runrun.Min, runrun.Max, runrun.Product)


def every_op(jhvd, a, positive):
    """The four reductions (Product of the positive values) in one function."""
    return [jhvd.allreduce(positive if op == runrun.Product else a, op=op) for op in OPS]


@pytest.mark.parametrize("dtype", DTYPES)
def test_allreduce_every_op_and_dtype(jhvd, dtype):
    n, r = jhvd.size(), jhvd.rank()
    jitted = jax.jit(lambda a, positive: every_op(jhvd, a, positive))  # one compile per shape
    with x64(dtype):
        for shape in [(17,), (3, 5), ()]:
            parts = everyone(n, shape, dtype)
            positive = everyone(n, shape, dtype, seed=1, low=1, high=3)
            expected = [reference(op, positive if op == runrun.Product else parts, dtype)
                        for op in OPS]
            mine, mine_positive = jnp.asarray(parts[r]), jnp.asarray(positive[r])
            for out, e in zip(every_op(jhvd, mine, mine_positive), expected):
                exact(out, e, dtype)
            for out, e in zip(jitted(mine, mine_positive), expected):
                exact(out, e, dtype)
            exact(mine, parts[r], dtype)  # the input is unchanged


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_allreduce_average_and_scaling(jhvd, dtype):
    n, r = jhvd.size(), jhvd.rank()
    with x64(dtype):
        parts = [p * n for p in everyone(n, (4, 4), dtype)]
        expected = np.stack(parts).astype(np.float64).sum(0)
        mine = jnp.asarray(parts[r])
        exact(jhvd.allreduce(mine), expected / n, dtype)
        exact(jax.jit(jhvd.allreduce)(mine), expected / n, dtype)
        scaled = lambda a: jhvd.allreduce(a, op=jhvd.Sum, prescale_factor=0.5,  # noqa: E731
                                          postscale_factor=4.0)
        exact(scaled(mine), expected * 2, dtype)
        exact(jax.jit(scaled)(mine), expected * 2, dtype)


@pytest.mark.parametrize("jit", [False, True])
def test_allreduce_adasum(jhvd, jit):
    """Adasum of parallel inputs 2^r * v is c * v, c the pairwise tree of the scalars (exact),
    eagerly and inside jax.jit."""
    n, r = jhvd.size(), jhvd.rank()
    v = np.array([3.0, -1.0, 0.5, 2.0, 0.0], np.float32)
    level = [2.0 ** k for k in range(n)]
    while len(level) > 1:
        level = [(1 - a * b / (2 * a * a)) * a + (1 - a * b / (2 * b * b)) * b
                 for a, b in zip(level[::2], level[1::2])]
    call = lambda x: jhvd.allreduce(x, op=jhvd.Adasum, name="jax.adasum")  # noqa: E731
    got = (jax.jit(call) if jit else call)(jnp.asarray(v * 2.0 ** r))
    assert np.array_equal(np.asarray(got), v * level[0])
    # Grouped: each array keeps its own coefficients (the parallel one its tree, one on disjoint
    # elements its sum), although the arrays share a dtype.
    disjoint = np.where(np.arange(5) % n == r, v, 0).astype(np.float32)
    grouped = lambda a, b: jhvd.grouped_allreduce([a, b], op=jhvd.Adasum)  # noqa: E731
    pair = (jax.jit(grouped) if jit else grouped)(jnp.asarray(v * 2.0 ** r), jnp.asarray(disjoint))
    assert np.array_equal(np.asarray(pair[0]), v * level[0])
    assert np.array_equal(np.asarray(pair[1]), v)


def test_grouped_allreduce_every_dtype_in_one_group(jhvd):
    """Every dtype in one group (packed into one buffer per dtype, fusion.py), two arrays of
    some dtypes, shapes of every rank including 0-d, eagerly and inside jit."""
    n, r = jhvd.size(), jhvd.rank()
    specs = [(d, s) for d, s in zip(DTYPES, [(3,), (2, 2), (), (7,), (1, 3), (5,), (2,), (),
                                             (4, 1), (6,)])]
    specs += [("float32", (2, 3)), ("bool", ()), ("bfloat16", (3,))]
    with jax.enable_x64(True):
        parts = [everyone(n, shape, d, seed=i) for i, (d, shape) in enumerate(specs)]
        expected = [reference(runrun.Sum, p, d) for p, (d, _) in zip(parts, specs)]
        mine = [jnp.asarray(p[r]) for p in parts]
        group = lambda xs: jhvd.grouped_allreduce(xs, op=jhvd.Sum)  # noqa: E731
        for outs in (group(mine), jax.jit(group)(mine)):
            assert len(outs) == len(specs)
            for out, e, (d, _) in zip(outs, expected, specs):
                exact(out, e, d)
        maxed = jhvd.grouped_allreduce(mine, op=jhvd.Max)
        for out, p, (d, _) in zip(maxed, parts, specs):
            exact(out, reference(runrun.Max, p, d), d)
    assert jhvd.grouped_allreduce([]) == []


@pytest.mark.parametrize("dtype", DTYPES)
def test_broadcast_allgather_alltoall_every_dtype(jhvd, dtype):
    n, r = jhvd.size(), jhvd.rank()
    with x64(dtype):
        parts = everyone(n, (2 * n, 3), dtype)
        mine = jnp.asarray(parts[r])
        root = n - 1
        # equal splits: rank p receives rows [2p, 2p+2) of every rank's array, in rank order
        expected = [parts[root], np.concatenate(parts),
                    np.concatenate([p[2 * r:2 * r + 2] for p in parts])]
        three = lambda a: [jhvd.broadcast(a, root), jhvd.allgather(a),  # noqa: E731
                           jhvd.alltoall(a)]
        for outs in (three(mine), jax.jit(three)(mine)):  # one compile for the three
            for out, e in zip(outs, expected):
                exact(out, e, dtype)


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "float16", "bfloat16", "float32",
                                   "float64"])
def test_reducescatter(jhvd, dtype):
    n, r = jhvd.size(), jhvd.rank()
    with x64(dtype):
        for rows in (2 * n, 2 * n + 1):  # the first rows % n ranks get one extra row
            parts = everyone(n, (rows, 3), dtype)
            total = np.stack(parts).astype(np.float64).sum(0)
            counts = [rows // n + (1 if i < rows % n else 0) for i in range(n)]
            start = sum(counts[:r])
            mine_rows = slice(start, start + counts[r])
            mine = jnp.asarray(parts[r])
            rs = lambda a: jhvd.reducescatter(a, op=jhvd.Sum)  # noqa: E731
            exact(rs(mine), total[mine_rows], dtype)
            exact(jax.jit(rs)(mine), total[mine_rows], dtype)
            if dtype in ("float32", "float64"):
                exact(jhvd.reducescatter(mine), total[mine_rows] / n, dtype)


def test_uneven_allgather_and_alltoall_outside_jit(jhvd):
    n, r = jhvd.size(), jhvd.rank()
    parts = [values(i, (i + 1, 2), "float32") for i in range(n)]
    exact(jhvd.allgather(jnp.asarray(parts[r])), np.concatenate(parts), "float32")
    exact(jhvd.grouped_allgather([jnp.asarray(parts[r])])[0], np.concatenate(parts), "float32")
    # rank i sends i + p + 1 rows to rank p
    sends = [[i + p + 1 for p in range(n)] for i in range(n)]
    arrays = [values(i, (sum(sends[i]), 2), "int32", seed=5) for i in range(n)]
    out, received = jhvd.alltoall(jnp.asarray(arrays[r]), splits=sends[r])
    offsets = [np.cumsum([0] + s) for s in sends]
    expected = np.concatenate([arrays[i][offsets[i][r]:offsets[i][r + 1]] for i in range(n)])
    exact(out, expected, "int32")
    exact(received, np.asarray([sends[i][r] for i in range(n)]), "int32")
    out, received = jhvd.alltoall(jnp.asarray(arrays[r]), splits=jnp.asarray(sends[r]))
    exact(out, expected, "int32")


def test_many_independent_ops_in_one_jit_run_in_program_order(jhvd):
    """Eight collectives with no data dependence between them, named and unnamed, in one
    jitted function called several times: XLA may schedule them in any order, the ordered
    callbacks keep program order on every rank, so nothing deadlocks and each is right."""
    n, r = jhvd.size(), jhvd.rank()

    @jax.jit
    def many(a):
        outs = [jhvd.allreduce(a + i, op=jhvd.Sum, name=None if i % 2 else f"indep.{i}")
                for i in range(6)]
        outs.append(jhvd.allgather(a))
        outs.append(jhvd.broadcast(a * 3, 0))
        return outs

    for step in range(3):
        a = jnp.full((4,), float(r + step))
        outs = many(a)
        base = sum(range(n)) + n * step
        for i in range(6):
            exact(outs[i], np.full((4,), base + n * i, np.float32), "float32")
        exact(outs[6], np.repeat(np.arange(n, dtype=np.float32) + step, 4), "float32")
        exact(outs[7], np.full((4,), 3.0 * step, np.float32), "float32")


def test_names_are_chosen_when_ops_run_not_when_traced(jhvd):
    """Rank 0 alone traces (lowers) the function first: were unnamed ops named at trace time
    from the shared counter, rank 0's names would run ahead and the ranks' ops would never
    match (a hang until the collective timeout)."""
    n, r = jhvd.size(), jhvd.rank()
    fn = jax.jit(lambda a: jhvd.allreduce(a, op=jhvd.Sum) + jhvd.allreduce(a, op=jhvd.Max))
    a = jnp.full((3,), float(r))
    if r == 0:
        fn.lower(a)
        jax.jit(lambda a: jhvd.allreduce(a * 2)).lower(a)  # another trace, never run
    exact(fn(a), np.full((3,), sum(range(n)) + n - 1, np.float32), "float32")
    exact(jhvd.allreduce(a, op=jhvd.Sum), np.full((3,), sum(range(n)), np.float32), "float32")


def test_process_set_eager_and_jit(jhvd):
    n, r = jhvd.size(), jhvd.rank()
    evens = jhvd.ProcessSet(list(range(0, n, 2)))
    jhvd.add_process_set(evens)
    try:
        if evens.included():
            a = jnp.full((2,), float(r))
            expected = np.full((2,), float(sum(range(0, n, 2))), np.float32)
            exact(jhvd.allreduce(a, op=jhvd.Sum, process_set=evens), expected, "float32")
            fn = jax.jit(lambda x: jhvd.allreduce(x, op=jhvd.Sum, process_set=evens))
            exact(fn(a), expected, "float32")
            exact(jhvd.allgather(a, process_set=evens),
                  np.repeat(np.arange(0, n, 2, dtype=np.float32), 2), "float32")
    finally:
        jhvd.remove_process_set(evens)


def test_barrier_join_and_topology(jhvd):
    jhvd.barrier()
    assert jhvd.join() in range(jhvd.size())
    assert jhvd.is_initialized() and 0 <= jhvd.local_rank() < jhvd.local_size()
    assert 0 <= jhvd.cross_rank() < jhvd.cross_size()


def test_eager_input_still_being_computed_is_waited_for(jhvd):
    """jax dispatches asynchronously: an input whose computation is still running when the op
    exports it must be read only once ready (the DLPack export waits)."""
    n = jhvd.size()
    ones = jnp.ones((700, 700), jnp.float32)
    product = ones @ ones  # every element 700, computed in the background
    exact(jhvd.allreduce(product, op=jhvd.Sum), np.full((700, 700), 700.0 * n), "float32")
    exact(jhvd.grouped_allreduce([ones @ ones], op=jhvd.Sum)[0],
          np.full((700, 700), 700.0 * n), "float32")


def test_program_order_even_when_inputs_are_ready_in_another_order(jhvd):
    """Two unnamed allreduces, the first fed by a long matmul on rank 0 only: unordered, rank 0
    could start the second first and pair it with the other ranks' first (names follow the
    order ops start in); ordered callbacks start both in program order on every rank."""
    n, r = jhvd.size(), jhvd.rank()
    side = 600 if r == 0 else 4  # each rank compiles its own program: shapes may differ

    @jax.jit
    def two(a, big):
        slow = (big @ big)[0, :4] * 0 + a
        return jhvd.allreduce(slow, op=jhvd.Sum), jhvd.allreduce(a + 100, op=jhvd.Sum)

    for _ in range(3):
        first, second = two(jnp.full((4,), float(r)), jnp.ones((side, side)))
        exact(first, np.full((4,), float(sum(range(n))), np.float32), "float32")
        exact(second, np.full((4,), float(sum(range(n)) + 100 * n), np.float32), "float32")


def test_allreduce_gradient_is_horovods(jhvd):
    """Reverse mode through allreduce (eagerly and inside jit): the gradient is the allreduce
    of the cotangent with the same op, as Horovod defines it."""
    n, r = jhvd.size(), jhvd.rank()
    x = jnp.arange(3.0, dtype=jnp.float32)
    for op, scale in ((jhvd.Sum, n), (jhvd.Average, 1.0)):
        loss = lambda v: jnp.sum(jhvd.allreduce(v * (r + 1), op=op) ** 2)  # noqa: E731
        # d/dv = (r + 1) * allreduce_op(2 * S) with S = allreduce_op(v * (rank + 1))
        total = sum(k + 1 for k in range(n)) * (1.0 if op == jhvd.Sum else 1.0 / n)
        expected = (r + 1) * 2 * total * scale * np.arange(3.0)
        exact(jax.grad(loss)(x), expected.astype(np.float32), "float32")
        exact(jax.jit(jax.grad(loss))(x), expected.astype(np.float32), "float32")
    with pytest.raises(jhvd.InvalidArgumentError, match="gradient is defined for"):
        jax.grad(lambda v: jnp.sum(jhvd.allreduce(v, op=jhvd.Max)))(x)

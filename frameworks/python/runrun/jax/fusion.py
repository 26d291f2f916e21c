"""Packs a list of arrays into one flat buffer per dtype and back, so that a grouped
allreduce hands the runtime (and, inside jax.jit, XLA's callback) one buffer per dtype
instead of one per array.

Why: an allreduce is elementwise, so reducing the concatenation is reducing each array; what
costs is per array on the Python side: each argument of an io_callback becomes a jax.Array and
back (tens of microseconds each), and each eager output a jax.Array made from a numpy buffer.
Packing and unpacking are jitted (one dispatch each for the whole list) or, inside jit, fused
into the caller's program. Adasum is not elementwise (each array has its own coefficients), so
for it every array is a group of its own (`layout(..., separate=True)`).
Thread-safety: pure functions; the jit caches are jax's.
"""

import functools

import jax
import jax.numpy as jnp


def layout(xs, separate=False):
    """(groups, shapes): groups = ((dtype, (index, ...)), ...) in first-appearance order, or
    with `separate` one group per array."""
    shapes = tuple(tuple(x.shape) for x in xs)
    if separate:
        return tuple((jnp.dtype(x.dtype), (i,)) for i, x in enumerate(xs)), shapes
    groups = {}
    for i, x in enumerate(xs):
        groups.setdefault(jnp.dtype(x.dtype), []).append(i)
    return tuple((d, tuple(idx)) for d, idx in groups.items()), shapes


def pack(xs, groups):
    """One flat array per dtype group (traceable)."""
    return [jnp.concatenate([jnp.ravel(xs[i]) for i in idx]) if len(idx) > 1
            else jnp.ravel(xs[idx[0]]) for _, idx in groups]


def unpack(flats, groups, shapes):
    """The arrays of `shapes` back out of pack's buffers (traceable)."""
    out = [None] * len(shapes)
    for flat, (_, idx) in zip(flats, groups):
        offset = 0
        for i in idx:
            count = 1
            for d in shapes[i]:
                count *= d
            out[i] = jnp.reshape(flat[offset:offset + count], shapes[i])
            offset += count
    return out


@functools.partial(jax.jit, static_argnums=1)
def pack_jit(xs, groups):
    return pack(xs, groups)


@functools.partial(jax.jit, static_argnums=(1, 2))
def unpack_jit(flats, groups, shapes):
    return unpack(flats, groups, shapes)

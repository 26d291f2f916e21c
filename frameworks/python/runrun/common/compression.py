"""Gradient compression for the wire, as Horovod's Compression classes, for every adapter.

Why here: the compressors' logic (only floating-point tensors are cast to the wire dtype, the
original dtype is the context that decompress casts back to) is the same for every framework;
an adapter supplies only how its tensors are tested for floating point and cast.
`compress(tensor)` returns the tensor to send and a context; `decompress(tensor, ctx)`
restores the original dtype. Thread-safety: stateless.
"""


class Compressor:
    @staticmethod
    def compress(tensor):
        raise NotImplementedError

    @staticmethod
    def decompress(tensor, ctx):
        raise NotImplementedError


class NoneCompressor(Compressor):
    @staticmethod
    def compress(tensor):
        return tensor, None

    @staticmethod
    def decompress(tensor, ctx):
        return tensor


def cast_compressor(class_name, wire_dtype, floating_dtype, cast):
    """A Compressor class named `class_name` that sends floating-point tensors as `wire_dtype`.
    `floating_dtype(tensor)` returns the tensor's dtype when it is floating point (else None),
    in the form `cast(tensor, dtype)` takes and `wire_dtype` is written in."""

    class _Cast(Compressor):
        @staticmethod
        def compress(tensor):
            dtype = floating_dtype(tensor)
            if dtype is not None and dtype != wire_dtype:
                return cast(tensor, wire_dtype), tensor.dtype
            return tensor, None

        @staticmethod
        def decompress(tensor, ctx):
            return tensor if ctx is None else cast(tensor, ctx)

    _Cast.__name__ = _Cast.__qualname__ = class_name
    return _Cast

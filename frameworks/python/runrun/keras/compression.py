"""Gradient compression for runrun.keras, as horovod.tensorflow.keras.Compression, on any
Keras backend (keras.ops casts): floating-point tensors go over the wire as float16 (fp16) or
bfloat16 (bf16) and come back in their own dtype. Thread-safety: stateless."""

import keras
from keras import ops


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


def _cast_compressor(wire_dtype, class_name):
    class _Cast(Compressor):
        @staticmethod
        def compress(tensor):
            dtype = keras.backend.standardize_dtype(tensor.dtype)
            if "float" in dtype and dtype != wire_dtype:
                return ops.cast(tensor, wire_dtype), tensor.dtype
            return tensor, None

        @staticmethod
        def decompress(tensor, ctx):
            return tensor if ctx is None else ops.cast(tensor, ctx)

    _Cast.__name__ = _Cast.__qualname__ = class_name
    return _Cast


FP16Compressor = _cast_compressor("float16", "FP16Compressor")
BF16Compressor = _cast_compressor("bfloat16", "BF16Compressor")


class Compression:
    """Choices for DistributedOptimizer(compression=...)."""

    none = NoneCompressor
    fp16 = FP16Compressor
    bf16 = BF16Compressor

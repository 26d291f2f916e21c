"""Gradient compression for the wire, as horovod.tensorflow.Compression: `compress` returns
the tensor to send and a context, `decompress` restores the original dtype. Only
floating-point tensors are compressed; others pass through. Thread-safety: stateless."""

import tensorflow as tf


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
            if tensor.dtype.is_floating and tensor.dtype != wire_dtype:
                return tf.cast(tensor, wire_dtype), tensor.dtype
            return tensor, None

        @staticmethod
        def decompress(tensor, ctx):
            return tensor if ctx is None else tf.cast(tensor, ctx)

    _Cast.__name__ = _Cast.__qualname__ = class_name
    return _Cast


FP16Compressor = _cast_compressor(tf.float16, "FP16Compressor")
BF16Compressor = _cast_compressor(tf.bfloat16, "BF16Compressor")


class Compression:
    """Choices for allreduce(compression=...), DistributedGradientTape and the Keras
    DistributedOptimizer."""

    none = NoneCompressor
    fp16 = FP16Compressor
    bf16 = BF16Compressor

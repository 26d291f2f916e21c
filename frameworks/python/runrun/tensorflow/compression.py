"""Gradient compression for the wire, as horovod.tensorflow.Compression (runrun.common.compression:
only floating-point tensors are compressed; others pass through). Thread-safety: stateless."""

import tensorflow as tf

from runrun.common.compression import Compressor, NoneCompressor, cast_compressor

__all__ = ["Compression", "Compressor", "NoneCompressor", "FP16Compressor", "BF16Compressor"]


def _floating(tensor):
    return tensor.dtype if tensor.dtype.is_floating else None


FP16Compressor = cast_compressor("FP16Compressor", tf.float16, _floating, tf.cast)
BF16Compressor = cast_compressor("BF16Compressor", tf.bfloat16, _floating, tf.cast)


class Compression:
    """Choices for allreduce(compression=...), DistributedGradientTape and the Keras
    DistributedOptimizer."""

    none = NoneCompressor
    fp16 = FP16Compressor
    bf16 = BF16Compressor

"""Gradient compression for runrun.keras, as horovod.tensorflow.keras.Compression, on any
Keras backend (keras.ops casts; runrun.common.compression): floating-point tensors go over the
wire as float16 (fp16) or bfloat16 (bf16) and come back in their own dtype.
Thread-safety: stateless."""

import keras
from keras import ops

from runrun.common.compression import Compressor, NoneCompressor, cast_compressor

__all__ = ["Compression", "Compressor", "NoneCompressor", "FP16Compressor", "BF16Compressor"]


def _floating(tensor):
    dtype = keras.backend.standardize_dtype(tensor.dtype)
    return dtype if "float" in dtype else None


FP16Compressor = cast_compressor("FP16Compressor", "float16", _floating, ops.cast)
BF16Compressor = cast_compressor("BF16Compressor", "bfloat16", _floating, ops.cast)


class Compression:
    """Choices for DistributedOptimizer(compression=...)."""

    none = NoneCompressor
    fp16 = FP16Compressor
    bf16 = BF16Compressor

"""Gradient compression for the wire, as horovod.torch.Compression (runrun.common.compression:
only floating-point tensors are compressed; others pass through)."""

import torch

from runrun.common.compression import Compressor, NoneCompressor, cast_compressor

__all__ = ["Compression", "Compressor", "NoneCompressor", "FP16Compressor", "BF16Compressor"]


def _floating(tensor):
    return tensor.dtype if tensor.dtype.is_floating_point else None


def _cast(tensor, dtype):
    return tensor.to(dtype)


FP16Compressor = cast_compressor("FP16Compressor", torch.float16, _floating, _cast)
BF16Compressor = cast_compressor("BF16Compressor", torch.bfloat16, _floating, _cast)


class Compression:
    """Choices for DistributedOptimizer(compression=...) and allreduce(compression=...)."""

    none = NoneCompressor
    fp16 = FP16Compressor
    bf16 = BF16Compressor

"""Gradient compression for the wire, as horovod.torch.Compression: `compress` returns the
tensor to send and a context, `decompress` restores the original dtype. Only floating-point
tensors are compressed; others pass through."""

import torch


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


def _cast_compressor(wire_dtype):
    class _Cast(Compressor):
        @staticmethod
        def compress(tensor):
            if tensor.dtype.is_floating_point and tensor.dtype != wire_dtype:
                return tensor.to(wire_dtype), tensor.dtype
            return tensor, None

        @staticmethod
        def decompress(tensor, ctx):
            return tensor if ctx is None else tensor.to(ctx)

    return _Cast


FP16Compressor = _cast_compressor(torch.float16)
FP16Compressor.__name__ = FP16Compressor.__qualname__ = "FP16Compressor"
BF16Compressor = _cast_compressor(torch.bfloat16)
BF16Compressor.__name__ = BF16Compressor.__qualname__ = "BF16Compressor"


class Compression:
    """Choices for DistributedOptimizer(compression=...) and allreduce(compression=...)."""

    none = NoneCompressor
    fp16 = FP16Compressor
    bf16 = BF16Compressor

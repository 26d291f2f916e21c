"""SyncBatchNorm: batch normalisation with statistics over the batches of every rank.

Why: with small per-rank batches, per-rank statistics are noisy; this computes mean and
variance over the global batch. Statistics travel through the differentiable Sum allreduce, so
the backward pass is synchronised too. In eval mode it is plain BatchNorm with running stats.
Thread-safety: collective in training mode (every rank runs forward in the same order).
"""

import torch
import torch.nn.functional as F
from torch.nn.modules.batchnorm import _BatchNorm

from runrun.common.ops import Sum
from runrun.common.process_sets import global_process_set
from runrun.torch.autograd import allreduce


class SyncBatchNorm(_BatchNorm):
    """Drop-in for torch.nn.BatchNorm{1,2,3}d (input [N, C, ...])."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_set=global_process_set):
        super().__init__(num_features, eps, momentum, affine, track_running_stats)
        self.process_set = process_set

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"SyncBatchNorm expects at least 2-D input, got {input.dim()}-D")

    def forward(self, input):
        self._check_input_dim(input)
        if not self.training and self.track_running_stats:
            return F.batch_norm(input, self.running_mean, self.running_var, self.weight,
                                self.bias, False, 0.0, self.eps)
        dims = [0] + list(range(2, input.dim()))
        # Statistics in float32 at least (as torch's BatchNorm on half inputs): a float16 count
        # passes 65504 at 2x128x16x16 per rank, and sums of squares overflow sooner.
        stats_dtype = torch.promote_types(input.dtype, torch.float32)
        values = input.to(stats_dtype)
        count = torch.tensor([input.numel() / input.shape[1]], dtype=stats_dtype,
                             device=input.device)  # on the input's device, for torch.cat
        stats = torch.cat([values.sum(dims), (values * values).sum(dims), count])
        stats = allreduce(stats, op=Sum, name=None, process_set=self.process_set)
        channels = input.shape[1]
        total = stats[-1]
        mean = stats[:channels] / total
        var = stats[channels:2 * channels] / total - mean * mean
        if self.track_running_stats:
            self._update_running_stats(mean.detach(), var.detach(), float(total.detach()))
        shape = [1, channels] + [1] * (input.dim() - 2)
        out = (values - mean.view(shape)) * torch.rsqrt(var.view(shape) + self.eps)
        if self.affine:
            out = out * self.weight.view(shape) + self.bias.view(shape)
        return out.to(input.dtype)

    @torch.no_grad()
    def _update_running_stats(self, mean, var, total):
        self.num_batches_tracked += 1
        momentum = self.momentum
        if momentum is None:
            momentum = 1.0 / float(self.num_batches_tracked)
        unbiased = var * (total / max(total - 1.0, 1.0))
        self.running_mean.mul_(1 - momentum).add_(momentum * mean)
        self.running_var.mul_(1 - momentum).add_(momentum * unbiased)

"""The optimizer class behind DistributedOptimizer (optimizer.py): averages gradients across
ranks while the backward pass runs.

Why: the core of data-parallel training. A hook on every parameter fires an asynchronous
in-place allreduce of its gradient as soon as autograd accumulated it (torch's
register_post_accumulate_grad_hook), so communication overlaps the rest of the backward pass;
step() waits for all of them, then applies the wrapped optimizer's update. Semantics follow
horovod.torch.DistributedOptimizer, including backward_passes_per_step (local accumulation of
that many backward passes before one allreduce), synchronize()/skip_synchronize(), the
zero_grad() guard, and sparse gradients (allgathered as sparse tensors by
sparse_allreduce_async, or densified and allreduced with sparse_as_dense=True; either way the
optimizer gets a sparse gradient back, so SparseAdam works as in Horovod).
double_buffering=True (ChainerMN's) applies each step's gradients one step late, overlapping
their allreduce with the next step (see double_buffering.py). op=Adasum's delta optimizer
(adasum_optimizer.py) builds on this class.
Thread-safety: as the wrapped optimizer (one training thread).
"""

import contextlib
import warnings

import torch

from runrun.common import profile
from runrun.common.exceptions import InvalidArgumentError
from runrun.common.grouping import split_evenly
from runrun.common.ops import Average, resolve_op
from runrun.torch import collectives as c
from runrun.torch.double_buffering import DoubleBuffer
from runrun.torch.sparse import sparse_allreduce_async

# The ctx of a sparse gradient's handle: its output replaces p.grad as is.
_SPARSE = object()
# ... of a parameter without a gradient on this rank whose gradients are sparse: the gathered
# tensor replaces p.grad unless it is empty (no rank had one), when p.grad stays None.
_SPARSE_MISSING = object()


def _empty_sparse_like(p, sparse_dim):
    """A sparse gradient of `p` with no element (this rank's share when it has none)."""
    indices = torch.empty((sparse_dim, 0), dtype=torch.int64, device=p.device)
    values = torch.empty((0, *p.shape[sparse_dim:]), dtype=p.dtype, device=p.device)
    return torch.sparse_coo_tensor(indices, values, p.shape, check_invariants=True)


class _DistributedOptimizer(torch.optim.Optimizer):
    """Mixin placed before the wrapped optimizer's class (see DistributedOptimizer)."""

    def _runrun_setup(self, named_parameters, compression, backward_passes_per_step, op,
                      gradient_predivide_factor, groups, sparse_as_dense, process_set,
                      double_buffering=False):
        if double_buffering and groups is not None:
            raise InvalidArgumentError("groups is not supported with double_buffering=True (the "
                                       "allreduces start together at step(), fused anyway)")
        self._double_buffer = DoubleBuffer(self) if double_buffering else None
        self._compression = compression
        self.backward_passes_per_step = int(backward_passes_per_step)
        if self.backward_passes_per_step < 1:
            raise InvalidArgumentError(
                f"backward_passes_per_step must be >= 1, got {backward_passes_per_step}")
        self.op = resolve_op(op)
        if gradient_predivide_factor != 1.0 and self.op != Average:
            raise InvalidArgumentError(
                "gradient_predivide_factor != 1.0 is only meaningful with op=Average")
        self.gradient_predivide_factor = float(gradient_predivide_factor)
        self.sparse_as_dense = sparse_as_dense
        self.process_set = process_set
        self._parameter_names = self._name_parameters(named_parameters)
        self._groups = self._resolve_groups(groups)
        self._requires_update = set()
        # Parameters whose gradients were sparse (their sparse_dim): a step in which this rank
        # has none still joins the others' sparse allgather, and the optimizer gets a sparse
        # gradient back with sparse_as_dense too (SparseAdam takes no dense one).
        self._sparse_params = {}
        self._densified = {}  # this step's sparse_as_dense gradients: (sparse_dim, missing)
        self._handles = {}
        self._allreduce_delay = {}
        self._group_pending = {}
        self._hook_handles = []
        self._synchronized = False
        self._should_synchronize = True
        self._profiler = profile.active()  # None unless runrun --profile (docs/profiling.md)
        if process_set.included():
            self._register_hooks()

    def set_backward_passes_per_step(self, passes):
        """Changes backward_passes_per_step (as Horovod's): the local accumulation count of
        every parameter starts over with the new value."""
        passes = int(passes)
        if passes < 1:
            raise InvalidArgumentError(f"backward_passes_per_step must be >= 1, got {passes}")
        self.backward_passes_per_step = passes
        for p in self._allreduce_delay:
            self._allreduce_delay[p] = passes

    def _all_params(self):
        return [p for group in self.param_groups for p in group["params"]]

    def _name_parameters(self, named_parameters):
        params = self._all_params()
        if named_parameters is None:  # outside `<op>.noname.<n>`, the names of unnamed ops
            return {p: f"allreduce.parameter.noname.{i}" for i, p in enumerate(params)}
        named = list(named_parameters)
        if any(not isinstance(item, tuple) or len(item) != 2 for item in named):
            raise InvalidArgumentError(
                "named_parameters must be (name, parameter) pairs, e.g. model.named_parameters()")
        names = [n for n, _ in named]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise InvalidArgumentError(
                f"named_parameters contains duplicate names {duplicates}; names must be unique")
        by_param = {p: f"allreduce.{n}" for n, p in named}
        unnamed = [i for i, p in enumerate(params) if p not in by_param]
        if unnamed:
            raise InvalidArgumentError(
                f"named_parameters does not cover the optimizer's parameters (indices "
                f"{unnamed}); pass model.named_parameters() of the model the optimizer trains")
        return by_param

    def _resolve_groups(self, groups):
        """Maps each parameter to a tuple of parameters reduced as one grouped allreduce."""
        if groups is None or (isinstance(groups, int) and groups == 0):
            return {}
        params = [p for p in self._all_params() if p.requires_grad]
        if isinstance(groups, int):
            if groups < 1:
                raise InvalidArgumentError(f"groups must be >= 1, got {groups}")
            groups = split_evenly(params, groups)
        by_param = {}
        for group in groups:
            members = tuple(group)
            for p in members:
                by_param[p] = members
        return by_param

    def _register_hooks(self):
        for p in self._all_params():
            if p.requires_grad:
                self._requires_update.add(p)
                self._allreduce_delay[p] = self.backward_passes_per_step
                hook = (self._double_buffer.on_grad_ready if self._double_buffer is not None
                        else self._on_grad_ready)
                self._hook_handles.append(p.register_post_accumulate_grad_hook(hook))

    def _on_grad_ready(self, p):
        if p in self._handles and self._handles[p][0] is not None:
            if self._allreduce_delay[p] <= 0:
                raise AssertionError(
                    "Gradients were computed more than backward_passes_per_step times before "
                    "call to step(). Increase backward_passes_per_step to accumulate gradients "
                    "locally.")
        self._allreduce_delay[p] -= 1
        if self._allreduce_delay[p] > 0:
            self._handles[p] = (None, None)
            return
        if self._profiler is not None and p.grad is not None:
            self._profiler.gradient_ready(self._reduced_bytes(p.grad))
        group = self._groups.get(p)
        if group is None:
            self._handles[p] = self._allreduce_grad_async(p)
            return
        pending = self._group_pending.setdefault(group, set())
        pending.add(p)
        self._handles[p] = (None, None)
        if len(pending) == len(group):
            del self._group_pending[group]
            self._start_group(group)

    def _reduced_bytes(self, grad):
        """The bytes this gradient's allreduce moves (for runrun --profile): a sparse one's
        indices and values are gathered, unless sparse_as_dense densifies it."""
        if grad.is_sparse and not self.sparse_as_dense:
            return grad._values().nbytes + grad._indices().nbytes
        return grad.numel() * grad.element_size()

    def _scale_factors(self):
        if self.op == Average:
            # The core divides by the set size; predivide splits that division around the sum.
            return 1.0 / self.gradient_predivide_factor, self.gradient_predivide_factor
        return 1.0, 1.0

    def _is_sparse(self, p):
        """True when p's gradient travels as a sparse tensor (see _allreduce_grad_async): it
        is sparse, or missing on this rank for a parameter whose gradients were sparse."""
        if self.sparse_as_dense:
            return False
        if p.grad is None:
            return p in self._sparse_params
        return p.grad.is_sparse

    def _prepare_grad(self, p):
        missing = p.grad is None
        if missing:
            # Not computed on this rank this step (e.g. an unused branch): another rank may
            # have it, so contribute zeros rather than leave the others waiting.
            p.grad = torch.zeros_like(p, memory_format=torch.contiguous_format)
        if p.grad.is_sparse:  # sparse_as_dense: reduced dense, handed back sparse (Horovod)
            self._sparse_params[p] = p.grad.sparse_dim()
            self._densified[p] = (p.grad.sparse_dim(), False)
            p.grad = p.grad.to_dense()
        elif missing and p in self._sparse_params:
            self._densified[p] = (self._sparse_params[p], True)
        return self._compression.compress(p.grad)

    def _allreduce_grad_async(self, p):
        if self._is_sparse(p):
            # As Horovod: every rank's indices and values are gathered, uncompressed. The
            # predivide factor is not applied: Average divides the gathered values once.
            ctx = _SPARSE
            grad = p.grad
            if grad is None:
                ctx = _SPARSE_MISSING
                grad = _empty_sparse_like(p, self._sparse_params[p])
            else:
                self._sparse_params[p] = grad.sparse_dim()
            handle = sparse_allreduce_async(grad, name=self._parameter_names[p], op=self.op,
                                            process_set=self.process_set)
            return handle, ctx
        compressed, ctx = self._prepare_grad(p)
        pre, post = self._scale_factors()
        handle = c.gradient_allreduce_async_(compressed, name=self._parameter_names[p],
                                             op=self.op, prescale_factor=pre,
                                             postscale_factor=post,
                                             process_set=self.process_set)
        return handle, ctx

    def _start_group(self, group):
        # Sparse gradients cannot join a grouped allreduce: each travels on its own.
        dense = []
        for p in group:
            if self._is_sparse(p):
                self._handles[p] = self._allreduce_grad_async(p)
            else:
                dense.append(p)
        if not dense:
            return
        prepared = [self._prepare_grad(p) for p in dense]
        pre, post = self._scale_factors()
        name = "grouped." + self._parameter_names[dense[0]]
        handle = c.gradient_grouped_allreduce_async_(
            [t for t, _ in prepared], name=name, op=self.op, prescale_factor=pre,
            postscale_factor=post, process_set=self.process_set)
        for i, (p, (_, ctx)) in enumerate(zip(dense, prepared)):
            self._handles[p] = (handle, (i, ctx))

    def synchronize(self):
        """Waits for every gradient allreduce of this step (starting the missing ones)."""
        if self._double_buffer is not None:
            raise InvalidArgumentError(
                "synchronize() is not available with double_buffering=True: step() applies the "
                "previous step's gradients; use flush() to apply the pending ones")
        if not self.process_set.included():
            self._synchronized = True
            return
        for p in sorted(self._requires_update, key=lambda q: self._parameter_names[q]):
            handle, _ = self._handles.get(p, (None, None))
            if handle is None:
                group = self._groups.get(p)
                if group is None:
                    self._handles[p] = self._allreduce_grad_async(p)
                elif self._handles.get(group[0], (None, None))[0] is None:
                    self._group_pending.pop(group, None)
                    self._start_group(group)
        if self._profiler is not None:
            self._profiler.wait_begin()
        results = {}
        for p, (handle, ctx) in self._handles.items():
            if id(handle) not in results:
                results[id(handle)] = handle.wait()
            output = results[id(handle)]
            self._allreduce_delay[p] = self.backward_passes_per_step
            if ctx is _SPARSE or ctx is _SPARSE_MISSING:
                # Left None where no rank had a gradient, as torch leaves it.
                p.grad = None if ctx is _SPARSE_MISSING and output._nnz() == 0 else output
                continue
            if isinstance(ctx, tuple):
                output, ctx = output[ctx[0]], ctx[1]
            p.grad.set_(self._compression.decompress(output, ctx))
            if p in self._densified:
                sparse_dim, missing = self._densified.pop(p)
                p.grad = (None if missing and not p.grad.any()
                          else p.grad.to_sparse(sparse_dim))
        self._handles.clear()
        self._densified.clear()
        self._synchronized = True
        if self._profiler is not None:
            self._profiler.wait_end()

    @contextlib.contextmanager
    def skip_synchronize(self):
        """Inside, step() does not synchronize (call synchronize() yourself before it)."""
        self._should_synchronize = False
        try:
            yield
        finally:
            self._should_synchronize = True

    def step(self, closure=None):
        if self._double_buffer is not None:
            if closure is not None and self.process_set.included():
                raise InvalidArgumentError("step(closure) is not supported with "
                                           "double_buffering=True")
            if not self.process_set.included():
                result = super().step(closure)  # nothing to average with
            else:
                result = self._double_buffer.step(super().step)
            if self._profiler is not None:
                self._profiler.step_end()  # every rank: step_end() exchanges every 10 steps
            return result
        if self._should_synchronize:
            if self._synchronized:
                warnings.warn(
                    "optimizer.step() called without optimizer.skip_synchronize() context after "
                    "optimizer.synchronize(). This can cause training slowdown. You may want to "
                    "consider using optimizer.skip_synchronize() context if you use "
                    "optimizer.synchronize() in your code.")
            self.synchronize()
        self._synchronized = False
        result = super().step(closure)
        if self._profiler is not None:
            self._profiler.step_end()
        return result

    @property
    def has_pending_gradients(self):
        """True when a double-buffered step's averaged gradients wait for the next step()."""
        return self._double_buffer is not None and self._double_buffer.has_pending

    def flush(self):
        """With double_buffering=True: waits for the pending allreduce and applies it (after
        the last step, before a checkpoint). Returns True when it applied gradients; without
        double buffering (or with nothing pending) does nothing and returns False."""
        if self._double_buffer is None or not self.process_set.included():
            return False
        return self._double_buffer.flush(super().step)

    def zero_grad(self, set_to_none=True):
        if self._handles:
            raise AssertionError(
                "optimizer.zero_grad() was called after loss.backward() but before "
                "optimizer.step() or optimizer.synchronize(). This is prohibited as it can "
                "cause a race condition.")
        return super().zero_grad(set_to_none)

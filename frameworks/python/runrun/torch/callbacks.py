"""Training-loop callbacks (Horovod's Keras callbacks, for plain PyTorch loops).

Protocol: a loop calls, on every callback (or once on a CallbackList),
    on_train_begin(model, optimizer)      before the first batch
    on_epoch_begin(epoch)                 epochs count from 0
    on_batch_begin(batch)                 batches count from 0 within the epoch
    on_batch_end(batch, logs=None)
    on_epoch_end(epoch, logs=None) -> logs   `logs` is a dict of metric name -> number
Every method is optional to override; all callbacks are collective where noted and must then be
called on every rank in the same order. Example:

    callbacks = CallbackList([BroadcastGlobalVariablesCallback(0), MetricAverageCallback(),
                              LearningRateWarmupCallback(warmup_epochs=2, steps_per_epoch=n)])
    callbacks.on_train_begin(model, optimizer)
    for epoch in range(epochs):
        callbacks.on_epoch_begin(epoch)
        for batch, (x, y) in enumerate(loader):
            callbacks.on_batch_begin(batch)
            ...train step...
            callbacks.on_batch_end(batch)
        logs = callbacks.on_epoch_end(epoch, {"loss": epoch_loss})
"""

import torch

from runrun.common import basics
from runrun.common.exceptions import InvalidArgumentError
from runrun.common.process_sets import global_process_set
from runrun.torch import collectives as c
from runrun.torch.functions import broadcast_optimizer_state, broadcast_parameters


class Callback:
    """Base class: every hook does nothing."""

    def on_train_begin(self, model, optimizer=None):
        pass

    def on_epoch_begin(self, epoch):
        pass

    def on_batch_begin(self, batch):
        pass

    def on_batch_end(self, batch, logs=None):
        pass

    def on_epoch_end(self, epoch, logs=None):
        return logs


class CallbackList(Callback):
    """Calls each callback in order; on_epoch_end threads `logs` through them."""

    def __init__(self, callbacks):
        self.callbacks = list(callbacks)

    def on_train_begin(self, model, optimizer=None):
        for cb in self.callbacks:
            cb.on_train_begin(model, optimizer)

    def on_epoch_begin(self, epoch):
        for cb in self.callbacks:
            cb.on_epoch_begin(epoch)

    def on_batch_begin(self, batch):
        for cb in self.callbacks:
            cb.on_batch_begin(batch)

    def on_batch_end(self, batch, logs=None):
        for cb in self.callbacks:
            cb.on_batch_end(batch, logs)

    def on_epoch_end(self, epoch, logs=None):
        for cb in self.callbacks:
            result = cb.on_epoch_end(epoch, logs)
            logs = logs if result is None else result
        return logs


class BroadcastGlobalVariablesCallback(Callback):
    """Collective. At train begin, copies root_rank's model parameters and buffers, and its
    optimizer state, to every rank (so all start equal, e.g. after rank 0 loaded a checkpoint)."""

    def __init__(self, root_rank=0, process_set=global_process_set):
        self.root_rank = root_rank
        self.process_set = process_set

    def on_train_begin(self, model, optimizer=None):
        broadcast_parameters(model.state_dict(), self.root_rank, self.process_set)
        if optimizer is not None:
            broadcast_optimizer_state(optimizer, self.root_rank, self.process_set)


class MetricAverageCallback(Callback):
    """Collective. At epoch end, replaces every numeric metric in `logs` by its average over
    the ranks (every rank must pass the same metric names). Returns the averaged logs."""

    def __init__(self, process_set=global_process_set):
        self.process_set = process_set

    def on_epoch_end(self, epoch, logs=None):
        if not logs:
            return logs
        keys = sorted(k for k, v in logs.items() if isinstance(v, (int, float, torch.Tensor)))
        values = torch.tensor([float(logs[k]) for k in keys], dtype=torch.float64)
        averaged = c.allreduce_async(values, name=f"metric_average.{epoch}",
                                     process_set=self.process_set).wait()
        out = dict(logs)
        out.update({k: float(v) for k, v in zip(keys, averaged.tolist())})
        return out


class LearningRateWarmupCallback(Callback):
    """Ramps each parameter group's learning rate from lr/size to lr over `warmup_epochs`
    (Goyal et al., "Accurate, Large Minibatch SGD"), adjusting every batch. `initial_lr`
    defaults to each group's lr at train begin. With momentum_correction, a group's momentum
    is scaled by new_lr/old_lr for the batch in which the lr changed. Needs steps_per_epoch."""

    def __init__(self, initial_lr=None, warmup_epochs=5, momentum_correction=True,
                 steps_per_epoch=None, verbose=0):
        if steps_per_epoch is None or steps_per_epoch < 1:
            raise InvalidArgumentError(
                "LearningRateWarmupCallback needs steps_per_epoch (batches per epoch) >= 1")
        self.initial_lr = initial_lr
        self.warmup_epochs = warmup_epochs
        self.momentum_correction = momentum_correction
        self.steps_per_epoch = steps_per_epoch
        self.verbose = verbose
        self.optimizer = None
        self._target_lrs = []
        self._epoch = 0
        self._restore_momentum = None

    def on_train_begin(self, model, optimizer=None):
        if optimizer is None:
            raise InvalidArgumentError("LearningRateWarmupCallback needs the optimizer")
        self.optimizer = optimizer
        self._target_lrs = [self.initial_lr if self.initial_lr is not None else g["lr"]
                            for g in optimizer.param_groups]

    def on_epoch_begin(self, epoch):
        self._epoch = epoch

    def lr_multiplier(self, epoch_float):
        """lr / target lr at fractional epoch `epoch_float` (1.0 once warmed up)."""
        size = basics.size()
        if epoch_float >= self.warmup_epochs:
            return 1.0
        return (epoch_float * (size - 1) / self.warmup_epochs + 1.0) / size

    def on_batch_begin(self, batch):
        if self._epoch >= self.warmup_epochs + 1:
            return
        multiplier = self.lr_multiplier(self._epoch + batch / self.steps_per_epoch)
        self._restore_momentum = []
        for group, target in zip(self.optimizer.param_groups, self._target_lrs):
            old_lr, new_lr = group["lr"], target * multiplier
            group["lr"] = new_lr
            if (self.momentum_correction and "momentum" in group and old_lr > 0
                    and new_lr != old_lr and group["momentum"]):
                self._restore_momentum.append((group, group["momentum"]))
                group["momentum"] = group["momentum"] * new_lr / old_lr
        if self.verbose and batch == 0 and basics.rank() == 0:
            print(f"epoch {self._epoch}: learning rate multiplier {multiplier:.4f}")

    def on_batch_end(self, batch, logs=None):
        for group, momentum in self._restore_momentum or []:
            group["momentum"] = momentum
        self._restore_momentum = None

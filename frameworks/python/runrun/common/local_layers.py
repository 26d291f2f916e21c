"""The variables of Horovod's `local_layers` argument (PartialDistributedOptimizer,
PartialDistributedGradientTape): layers whose gradients stay local to each rank.

Why: runrun.keras and runrun.tensorflow take the same argument; a layer of any Keras backend
has `trainable_weights`.
Thread-safety: a pure function.
"""

from runrun.common.exceptions import InvalidArgumentError


def local_layer_variables(local_layers, who):
    """The trainable variables of `local_layers` (a layer or a list of layers)."""
    if local_layers is None:
        return []
    if not isinstance(local_layers, (list, tuple)):
        local_layers = [local_layers]
    variables = []
    for layer in local_layers:
        weights = getattr(layer, "trainable_weights", None)
        if weights is None:
            raise InvalidArgumentError(
                f"{who}: local_layers must be layers (with trainable_weights), got "
                f"{type(layer).__name__}")
        if not getattr(layer, "built", True):
            raise InvalidArgumentError(
                f"{who}: local layer '{getattr(layer, 'name', layer)}' is not built yet, so it "
                "has no variables to keep local; build the model first (an Input layer, "
                "model.build(input_shape) or one call)")
        variables.extend(weights)
    return variables

"""runrun.tensorflow.keras is runrun.keras under horovod.tensorflow.keras' path, so a Horovod
Keras script changes only its import line (`import runrun.tensorflow.keras as hvd`).

Why here too: this is the one place runrun.tensorflow reaches runrun.keras (Horovod's
horovod.tensorflow offers Keras' SyncBatchNormalization, DistributedOptimizer of a Keras
optimizer and TensorFlowKerasState: runrun.tensorflow's __init__, optimizer and elastic import
them from this module), while runrun.keras on the TensorFlow backend runs its collectives
through runrun.tensorflow (runrun.keras._backend_ops). Its import of runrun.keras is the only
import allowed to close a cycle (tests/python/test_import_graph.py).
"""

import sys

import runrun.keras as _keras

sys.modules[__name__] = _keras
sys.modules[__name__ + ".callbacks"] = _keras.callbacks
sys.modules[__name__ + ".elastic"] = _keras.elastic

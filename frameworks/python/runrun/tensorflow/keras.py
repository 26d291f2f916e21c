"""runrun.tensorflow.keras is runrun.keras under horovod.tensorflow.keras' path, so a Horovod
Keras script changes only its import line (`import runrun.tensorflow.keras as hvd`)."""

import sys

import runrun.keras as _keras

sys.modules[__name__] = _keras
sys.modules[__name__ + ".callbacks"] = _keras.callbacks
sys.modules[__name__ + ".elastic"] = _keras.elastic

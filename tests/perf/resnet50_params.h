#pragma once
// Why: the many-tensors benchmark needs the gradient sizes of a real model, not invented ones.
// These are ResNet-50's (torchvision layout) trainable parameters in model.parameters() order:
// conv1 + bn1, four stages of bottleneck blocks [3, 4, 6, 3] (1x1, 3x3, 1x1 convolutions, each
// followed by batch norm gamma and beta; the first block of each stage adds a 1x1 downsample
// convolution and its batch norm), then fc (2048 -> 1000) weight and bias.
// 161 tensors, 25,557,032 float32 elements. Backward produces the gradients in reverse order.
// Thread-safety: pure function.

#include <cstddef>
#include <string>
#include <vector>

namespace runrun::perf {

struct ParamTensor {
  std::string name;  // torchvision's parameter name, e.g. "layer1.0.conv2.weight"
  size_t elements = 0;
};

inline constexpr size_t kResnet50Tensors = 161;
inline constexpr size_t kResnet50Elements = 25557032;

// The parameters in model.parameters() order; its size and total are checked against the
// constants above (InternalError if the construction ever drifts).
std::vector<ParamTensor> resnet50_parameters();

}  // namespace runrun::perf

#pragma once
// Why: DLPack is how tensors cross the C API. This checks an incoming DLTensor (dtype,
// contiguity) and turns it into a TensorView that keeps its device (canonical_device; whether
// the build can move that device is checked at enqueue), and wraps a runtime-allocated
// OwnedTensor into a DLManagedTensor whose deleter frees it.
// Thread-safety: pure functions.

#include <dlpack/dlpack.h>

#include <string>

#include "core/runtime/tensor.h"

namespace runrun {

// Throws InvalidArgumentError naming `what` (e.g. "allreduce of tensor 'w' on rank 1: input").
TensorView view_from_dlpack(const DLTensor* tensor, const std::string& what);
// The same into `into`, whose shape keeps its capacity (a recycled entry's view: no allocation
// per tensor). On error `into` is left partly written.
void view_from_dlpack(const DLTensor* tensor, const std::string& what, TensorView& into);

// The caller owns the result and must call its deleter.
DLManagedTensor* to_dlpack(OwnedTensor tensor);

}  // namespace runrun

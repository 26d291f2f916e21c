#include "core/dlpack_convert.h"

#include <algorithm>

#include "common/errors.h"
#include "core/message.h"

namespace runrun {
namespace {

DataType dtype_from_dlpack(DLDataType t, const std::string& what) {
  if (t.lanes == 1) {
    if (t.code == kDLUInt && t.bits == 8) return DataType::kUInt8;
    if (t.code == kDLInt && t.bits == 8) return DataType::kInt8;
    if (t.code == kDLInt && t.bits == 16) return DataType::kInt16;
    if (t.code == kDLInt && t.bits == 32) return DataType::kInt32;
    if (t.code == kDLInt && t.bits == 64) return DataType::kInt64;
    if (t.code == kDLFloat && t.bits == 16) return DataType::kFloat16;
    if (t.code == kDLBfloat && t.bits == 16) return DataType::kBFloat16;
    if (t.code == kDLFloat && t.bits == 32) return DataType::kFloat32;
    if (t.code == kDLFloat && t.bits == 64) return DataType::kFloat64;
    if (t.code == kDLPackBoolCode && t.bits == 8) return DataType::kBool;
  }
  throw InvalidArgumentError(
      RUNRUN_WHERE, what + ": unsupported dtype (DLPack code " + std::to_string(t.code) +
                        ", " + std::to_string(t.bits) + " bits, " + std::to_string(t.lanes) +
                        " lanes); use uint8, int8, int16, int32, int64, float16, bfloat16, "
                        "float32, float64 or bool");
}

DLDataType dtype_to_dlpack(DataType type) {
  switch (type) {
    case DataType::kUInt8: return {kDLUInt, 8, 1};
    case DataType::kInt8: return {kDLInt, 8, 1};
    case DataType::kInt16: return {kDLInt, 16, 1};
    case DataType::kInt32: return {kDLInt, 32, 1};
    case DataType::kInt64: return {kDLInt, 64, 1};
    case DataType::kFloat16: return {kDLFloat, 16, 1};
    case DataType::kBFloat16: return {kDLBfloat, 16, 1};
    case DataType::kFloat32: return {kDLFloat, 32, 1};
    case DataType::kFloat64: return {kDLFloat, 64, 1};
    case DataType::kBool: return {kDLPackBoolCode, 8, 1};
  }
  return {kDLUInt, 8, 1};
}

struct ManagedContext {
  OwnedTensor tensor;
  std::vector<int64_t> shape;
};

}  // namespace

TensorView view_from_dlpack(const DLTensor* tensor, const std::string& what) {
  TensorView view;
  view_from_dlpack(tensor, what, view);
  return view;
}

void view_from_dlpack(const DLTensor* tensor, const std::string& what, TensorView& view) {
  RUNRUN_ENFORCE(tensor != nullptr, InvalidArgumentError, what + " is a null tensor");
  // Any device is described here; whether this build can move it is decided at enqueue
  // (check_tensor: UnsupportedError naming the device), where the op and rank are known.
  view.device = canonical_device(tensor->device);
  view.dtype = dtype_from_dlpack(tensor->dtype, what);
  RUNRUN_ENFORCE(tensor->ndim >= 0, InvalidArgumentError, what + ": negative ndim");
  RUNRUN_ENFORCE(tensor->ndim == 0 || tensor->shape != nullptr, InvalidArgumentError,
                 what + ": ndim is " + std::to_string(tensor->ndim) + " but shape is null");
  view.shape.assign(tensor->shape, tensor->shape + tensor->ndim);
  const bool empty = std::find(view.shape.begin(), view.shape.end(), 0) != view.shape.end();
  if (tensor->strides && !empty) {  // no element, no layout (torch gives [3, 0] strides [1, 1])
    int64_t expected = 1;
    for (int d = tensor->ndim - 1; d >= 0; --d) {
      bool trivial = tensor->shape[d] == 1 || tensor->strides[d] == expected;
      RUNRUN_ENFORCE(trivial, InvalidArgumentError,
                     what + ": the tensor is not contiguous (shape " + shape_string(view.shape) +
                         "); call .contiguous() on it first");
      expected *= tensor->shape[d];
    }
  }
  view.data = tensor->data ? static_cast<char*>(tensor->data) + tensor->byte_offset : nullptr;
}

DLManagedTensor* to_dlpack(OwnedTensor tensor) {
  auto* ctx = new ManagedContext{std::move(tensor), {}};
  ctx->shape = ctx->tensor.shape;
  auto* managed = new DLManagedTensor{};
  managed->dl_tensor.data = ctx->tensor.storage.get();
  managed->dl_tensor.device = ctx->tensor.device;
  managed->dl_tensor.ndim = static_cast<int>(ctx->shape.size());
  managed->dl_tensor.dtype = dtype_to_dlpack(ctx->tensor.dtype);
  managed->dl_tensor.shape = ctx->shape.data();
  managed->dl_tensor.strides = nullptr;
  managed->dl_tensor.byte_offset = 0;
  managed->manager_ctx = ctx;
  managed->deleter = [](DLManagedTensor* self) {
    delete static_cast<ManagedContext*>(self->manager_ctx);
    delete self;
  };
  return managed;
}

}  // namespace runrun

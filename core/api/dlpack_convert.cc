#include "core/api/dlpack_convert.h"

#include <runrun/dlpack_rules.h>

#include "common/errors.h"
#include "core/negotiation/message.h"

namespace runrun {
namespace {

// The rules' table gives each accepted dtype its DataType; every DataType appears once.
constexpr bool every_data_type_once() {
  if (dlpack_rules::kNumAcceptedDtypes != static_cast<size_t>(kNumDataTypes)) return false;
  for (int32_t type = 0; type < kNumDataTypes; ++type) {
    if (dlpack_rules::find_data_type(type) == nullptr) return false;
  }
  return true;
}
static_assert(every_data_type_once(), "runrun/dlpack_rules.h: one entry per DataType");

DataType dtype_from_dlpack(DLDataType t, const std::string& what) {
  const dlpack_rules::AcceptedDtype* accepted = dlpack_rules::find_accepted_dtype(t);
  if (accepted == nullptr) {
    throw InvalidArgumentError(RUNRUN_WHERE,
                               what + ": " + dlpack_rules::unsupported_dtype_message(t));
  }
  return static_cast<DataType>(accepted->data_type);
}

DLDataType dtype_to_dlpack(DataType type) {
  const dlpack_rules::AcceptedDtype* d = dlpack_rules::find_data_type(static_cast<int32_t>(type));
  if (d == nullptr) return {kDLUInt, 8, 1};
  return {d->code, d->bits, 1};
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
  RUNRUN_ENFORCE(dlpack_rules::contiguous(*tensor), InvalidArgumentError,
                 what + ": the tensor is not contiguous (shape " + shape_string(view.shape) +
                     "); call .contiguous() on it first");
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

#include "core/api/enqueue_checks.h"

#include <charconv>
#include <cmath>
#include <utility>

#include "core/execution/device_staging.h"
#include "ops/adasum/adasum_allreduce.h"
#include "ops/cuda_streams.h"
#include "ops/gpu_libraries.h"

namespace runrun {
namespace {

// For a CUDA tensor: what this process's run-time search for the CUDA runtime and NCCL found
// (ops/cuda/library_search.h), so the user sees what a GPU job would load, or where it looked.
std::string gpu_libraries_note(DLDevice device) {
  if (device.device_type != kDLCUDA && device.device_type != kDLCUDAManaged) return "";
  const GpuLibrariesFound& found = gpu_libraries_found();
  return "\nGPU libraries on this rank: " + found.cuda_runtime_text + "; " + found.nccl_text;
}

}  // namespace

std::string where(OpType op, const std::string& name, int rank) {
  return std::string(op_type_name(op)) + " of tensor '" + name + "' on rank " +
         std::to_string(rank);
}

std::string op_failure(OpType op, const std::string& name, int rank, const std::string& reason) {
  if (reason.rfind("runrun on rank ", 0) == 0) {
    return std::string(op_type_name(op)) + " of tensor '" + name + "': " + reason;
  }
  return where(op, name, rank) + ": " + reason;
}

void check_tensor(OpType op, const std::string& name, int rank, const TensorView& t,
                  const char* role) {
  RUNRUN_ENFORCE(!name.empty(), InvalidArgumentError,
                 std::string(op_type_name(op)) + " on rank " + std::to_string(rank) +
                     ": the tensor name is empty; give every op a name unique among the ops in "
                     "flight");
  RUNRUN_ENFORCE(name.rfind(kReservedPrefix, 0) != 0, InvalidArgumentError,
                 where(op, name, rank) + ": names starting with '" + kReservedPrefix +
                     "' are reserved for runrun's own ops (barrier, join, process sets); "
                     "choose another name");
  for (int64_t d : t.shape) {
    RUNRUN_ENFORCE(d >= 0, InvalidArgumentError,
                   where(op, name, rank) + ": the " + role + " has a negative dimension " +
                       shape_string(t.shape));
  }
  if (!is_cpu(t.device) && (t.device.device_type != kDLCUDA || !gpu::cuda_runtime_available())) {
    const bool cuda = t.device.device_type == kDLCUDA;
    throw UnsupportedError(
        RUNRUN_WHERE,
        where(op, name, rank) + ": the " + role + " is on " + device_string(t.device) +
            (cuda ? ", but this rank has no usable CUDA runtime with a GPU, which CUDA "
                    "tensors need (NCCL is optional: without it they are staged through host "
                    "memory); see below, or move the tensor to the CPU."
                  : ", but runrun moves host (cpu) and CUDA memory only; move the tensor to "
                    "the CPU.") +
            gpu_libraries_note(t.device));
  }
  RUNRUN_ENFORCE(t.data != nullptr || t.num_bytes() == 0, InvalidArgumentError,
                 where(op, name, rank) + ": the " + role + " is a null pointer with " +
                     std::to_string(t.num_bytes()) + " bytes; pass an allocated tensor");
}

void check_same_layout(OpType op, const std::string& name, int rank, const TensorView& in,
                       const TensorView& out) {
  RUNRUN_ENFORCE(same_device(in.device, out.device), InvalidArgumentError,
                 where(op, name, rank) + ": the output is on " + device_string(out.device) +
                     " but the input on " + device_string(in.device) +
                     "; pass both on the same device");
  RUNRUN_ENFORCE(in.dtype == out.dtype && in.shape == out.shape, InvalidArgumentError,
                 where(op, name, rank) + ": the output (" + std::string(data_type_name(out.dtype)) +
                     " " + shape_string(out.shape) + ") must have the input's dtype and shape (" +
                     std::string(data_type_name(in.dtype)) + " " + shape_string(in.shape) + ")");
}

void check_reduction(OpType op, const std::string& name, int rank, DataType dtype,
                     const AllreduceOptions& o) {
  // A NaN or infinite factor makes every element NaN or infinite on every rank.
  for (const auto& [label, factor] :
       {std::pair{"prescale_factor", o.prescale}, std::pair{"postscale_factor", o.postscale}}) {
    RUNRUN_ENFORCE(std::isfinite(factor), InvalidArgumentError,
                   where(op, name, rank) + ": " + label + "=" + std::to_string(factor) +
                       " is not a finite number; pass a finite scale factor (1.0: none)");
  }
  if (dtype != DataType::kBool) return;
  RUNRUN_ENFORCE(o.op != ReduceOp::kAverage, InvalidArgumentError,
                 where(op, name, rank) +
                     ": average is not defined for bool tensors; use sum "
                     "(logical or), min/product (and) or max (or)");
  RUNRUN_ENFORCE(o.prescale == 1.0 && o.postscale == 1.0, InvalidArgumentError,
                 where(op, name, rank) + ": scale factors cannot apply to bool tensors");
}

void check_adasum(const std::string& name, int rank, const TensorView& t, int set_size) {
  const std::string at = where(OpType::kAllreduce, name, rank) + ": op=Adasum ";
  RUNRUN_ENFORCE(is_floating_point(t.dtype), UnsupportedError,
                 at +
                     "combines floating-point tensors (float16, bfloat16, float32, float64), "
                     "not " +
                     std::string(data_type_name(t.dtype)) + "; use sum or average");
  RUNRUN_ENFORCE(is_cpu(t.device), UnsupportedError,
                 at + "runs on host memory only, the tensor is on " + device_string(t.device) +
                     "; move it to the CPU or use average");
  RUNRUN_ENFORCE(adasum_supports_size(set_size), UnsupportedError,
                 at + "needs a power-of-two number of ranks (as Horovod's); the process set has " +
                     std::to_string(set_size) + "; run 2, 4, 8, ... ranks or use average");
}

void check_has_rows(OpType op, const std::string& name, int rank, const TensorView& t) {
  RUNRUN_ENFORCE(!t.shape.empty(), InvalidArgumentError,
                 where(op, name, rank) +
                     ": needs a tensor with at least one dimension (got a "
                     "scalar); reshape it to [1]");
}

void tag_group(Request& request, std::string_view first_name, size_t size) {
  if (size < 2) return;
  char digits[24];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), size);
  static_cast<void>(ec);  // 24 digits hold any size_t
  request.group.assign("group:").append(first_name).append(":").append(digits, end);
  request.group_size = static_cast<int32_t>(size);
}

void complete_entry(TensorEntry& entry, std::shared_ptr<Handle> handle, size_t index) {
  entry.request.dtype = entry.input.dtype;
  entry.request.shape = entry.input.shape;
  entry.request.device = entry.input.device;
  entry.handle = std::move(handle);
  entry.handle_index = index;
  entry.enqueued_at = std::chrono::steady_clock::now();
  entry.device_sync = record_producer(entry.input.device);
}

std::unique_ptr<TensorEntry> make_entry(Request request, TensorView in, TensorView out,
                                        std::shared_ptr<Handle> handle, size_t index) {
  auto entry = std::make_unique<TensorEntry>();
  entry->request = std::move(request);
  entry->input = std::move(in);
  entry->output = std::move(out);
  complete_entry(*entry, std::move(handle), index);
  return entry;
}

}  // namespace runrun

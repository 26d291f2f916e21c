#pragma once
// Why: what every enqueue checks on the calling thread before anything is queued (tensor,
// dtype, layout, names, device), and how it builds the queue entry. An error here throws
// InvalidArgumentError (UnsupportedError for a device this build cannot move) naming the op,
// the tensor and the rank; nothing was enqueued.
// Thread-safety: pure functions.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/runtime/runtime.h"
#include "core/runtime/tensor_queue.h"

namespace runrun {

// Prefix of the names of runrun's own ops; user tensor names may not start with it.
inline constexpr const char* kReservedPrefix = "__runrun.";

// "allreduce of tensor 'w' on rank 1" for messages.
std::string where(OpType op, const std::string& name, int rank);
// An op's error when the runtime failed under it (a stopped worker, a closed queue):
// "<where>: <reason>", without the rank twice when `reason` names it ("runrun on rank R: ...").
std::string op_failure(OpType op, const std::string& name, int rank, const std::string& reason);

void check_tensor(OpType op, const std::string& name, int rank, const TensorView& t,
                  const char* role);
void check_same_layout(OpType op, const std::string& name, int rank, const TensorView& in,
                       const TensorView& out);
void check_reduction(OpType op, const std::string& name, int rank, DataType dtype,
                     const AllreduceOptions& o);
// Adasum (Horovod's op): an allreduce of floating-point host tensors over a process set of a
// power-of-two size (`set_size`); UnsupportedError otherwise, naming what to change.
void check_adasum(const std::string& name, int rank, const TensorView& t, int set_size);
void check_has_rows(OpType op, const std::string& name, int rank, const TensorView& t);

// Members of a grouped op (more than one tensor in one call) are negotiated as one unit:
// each names the group by its first member's name and its size. Written into request.group's
// buffer (a recycled entry's allocates nothing).
void tag_group(Request& request, std::string_view first_name, size_t size);

// Completes an entry whose request (name, op and options) and views are set: the request takes
// the input's dtype, shape and device, and the entry its handle, enqueue time and, for a CUDA
// input, the producer event. Assigns in place (a recycled entry's buffers are reused).
void complete_entry(TensorEntry& entry, std::shared_ptr<Handle> handle, size_t index);

std::unique_ptr<TensorEntry> make_entry(Request request, TensorView in, TensorView out,
                                        std::shared_ptr<Handle> handle, size_t index);

}  // namespace runrun

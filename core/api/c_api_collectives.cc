// The C API's collectives (c_api.h, "collectives"): DLPack tensors into views and entries of
// the Runtime, outputs the runtime allocates for NULL outputs, a handle for each op.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/errors.h"
#include "core/api/allocated_output.h"
#include "core/api/c_api_last_error.h"
#include "core/api/c_api_objects.h"
#include "core/api/dlpack_convert.h"
#include "core/runtime/runtime.h"
#include "runrun/c_api.h"

namespace {

using runrun::capi::give;
using runrun::capi::guarded;
using runrun::capi::require;
using runrun::capi::runtime_of;

runrun::AllreduceOptions options_of(const runrun_allreduce_options* o) {
  runrun::AllreduceOptions options;
  if (!o) return options;
  options.op = runrun::reduce_op_from_int(o->op);
  options.prescale = o->prescale_factor;
  options.postscale = o->postscale_factor;
  options.process_set = o->process_set;
  return options;
}

std::string describe(const char* op, const char* name, int rank, const char* role) {
  return std::string(op) + " of tensor '" + (name ? name : "") + "' on rank " +
         std::to_string(rank) + ": " + role;
}

// The description ("allreduce of tensor 'w' on rank 1: input") is built only for a refused
// tensor: view_from_dlpack is pure, so a refusal is redone with it for the message. This runs
// once per tensor enqueued (issue 12, point 6: no strings built on the per-tensor path).
void view_into(const char* op, const char* name, int rank, const DLTensor* t, const char* role,
               runrun::TensorView& into) {
  static const std::string kUndescribed;
  try {
    runrun::view_from_dlpack(t, kUndescribed, into);
  } catch (const runrun::Error&) {
    runrun::view_from_dlpack(t, describe(op, name, rank, role), into);
  }
}

runrun::TensorView view(const char* op, const char* name, int rank, const DLTensor* t,
                        const char* role) {
  runrun::TensorView result;
  view_into(op, name, rank, t, role, result);
  return result;
}

std::string name_of(const char* name) { return name ? name : ""; }

// The names and input views of a grouped call's tensors.
struct GroupArgs {
  std::vector<std::string> names;
  std::vector<runrun::TensorView> inputs;
};

GroupArgs group_args(const char* op, int rank, const char* const* names,
                     const DLTensor* const* inputs, size_t n) {
  GroupArgs args;
  for (size_t i = 0; i < n; ++i) {
    args.names.push_back(name_of(names[i]));
    args.inputs.push_back(view(op, names[i], rank, inputs[i], "input"));
  }
  return args;
}

// Outputs the runtime allocates for NULL outputs of allreduce/broadcast (c_api.h): each is
// enqueued as the op's output and handed to the handle (take_output_at(index)) before the
// caller sees the handle.
struct AllocatedOutputs {
  std::vector<std::pair<size_t, runrun::OwnedTensor>> outputs;

  // The output view for tensor `index` into `into`: `output` itself, or a new one like `input`.
  void output_into(runrun::OpType op, const char* name, int rank, size_t index,
                   const runrun::TensorView& input, const DLTensor* output, const char* api_op,
                   runrun::TensorView& into) {
    if (output != nullptr) return view_into(api_op, name, rank, output, "output", into);
    outputs.emplace_back(index, runrun::allocate_output_like(op, name_of(name), rank, input));
    into = outputs.back().second.view();
  }
  runrun::TensorView output(runrun::OpType op, const char* name, int rank, size_t index,
                            const runrun::TensorView& input, const DLTensor* output,
                            const char* api_op) {
    runrun::TensorView result;
    output_into(op, name, rank, index, input, output, api_op, result);
    return result;
  }
  void hand_to(runrun::Handle& handle) {
    for (auto& [index, tensor] : outputs) handle.set_output(index, std::move(tensor));
  }
};

// A recycled entry (Runtime::blank_entry) filled in place with allreduce member `index`'s name,
// input and output: one op per gradient allocates no name, shape or entry (issue 12, point 6).
std::unique_ptr<runrun::TensorEntry> allreduce_entry(runrun::Runtime& r, int rank, const char* name,
                                                     const DLTensor* input, const DLTensor* output,
                                                     size_t index, AllocatedOutputs& allocated) {
  std::unique_ptr<runrun::TensorEntry> entry = r.blank_entry();
  entry->request.name.assign(name ? name : "");
  view_into("allreduce", name, rank, input, "input", entry->input);
  allocated.output_into(runrun::OpType::kAllreduce, name, rank, index, entry->input, output,
                        "allreduce", entry->output);
  return entry;
}

}  // namespace

extern "C" {

runrun_allreduce_options runrun_allreduce_default_options(void) {
  return runrun_allreduce_options{RUNRUN_OP_AVERAGE, 1.0, 1.0, 0};
}

runrun_status runrun_allreduce(runrun_runtime* rt, const char* name, const DLTensor* input,
                               const DLTensor* output, const runrun_allreduce_options* options,
                               runrun_handle** out) {
  return guarded([&] {
    require(out != nullptr, "runrun_allreduce: out is null");
    runrun::Runtime& r = runtime_of(rt);
    AllocatedOutputs allocated;
    std::shared_ptr<runrun::Handle> handle =
        r.allreduce(allreduce_entry(r, r.topology().rank, name, input, output, 0, allocated),
                    options_of(options));
    allocated.hand_to(*handle);
    give(std::move(handle), out);
  });
}

runrun_status runrun_grouped_allreduce(runrun_runtime* rt, const char* const* names,
                                       const DLTensor* const* inputs,
                                       const DLTensor* const* outputs, size_t n,
                                       const runrun_allreduce_options* options,
                                       runrun_handle** out) {
  return guarded([&] {
    require(out && names && inputs, "runrun_grouped_allreduce: null argument");
    runrun::Runtime& r = runtime_of(rt);
    const int rank = r.topology().rank;
    std::vector<std::unique_ptr<runrun::TensorEntry>> entries;
    entries.reserve(n);
    AllocatedOutputs allocated;
    for (size_t i = 0; i < n; ++i) {
      entries.push_back(allreduce_entry(r, rank, names[i], inputs[i],
                                        outputs ? outputs[i] : nullptr, i, allocated));
    }
    std::shared_ptr<runrun::Handle> handle =
        r.grouped_allreduce(std::move(entries), options_of(options));
    allocated.hand_to(*handle);
    give(std::move(handle), out);
  });
}

runrun_status runrun_allgather(runrun_runtime* rt, const char* name, const DLTensor* input,
                               int32_t process_set, runrun_handle** out) {
  return runrun_grouped_allgather(rt, &name, &input, 1, process_set, out);
}

runrun_status runrun_grouped_allgather(runrun_runtime* rt, const char* const* names,
                                       const DLTensor* const* inputs, size_t n, int32_t process_set,
                                       runrun_handle** out) {
  return guarded([&] {
    require(out && names && inputs, "runrun_grouped_allgather: null argument");
    runrun::Runtime& r = runtime_of(rt);
    GroupArgs args = group_args("allgather", r.topology().rank, names, inputs, n);
    give(r.allgather(args.names, args.inputs, process_set), out);
  });
}

runrun_status runrun_broadcast(runrun_runtime* rt, const char* name, const DLTensor* input,
                               const DLTensor* output, int32_t root_rank, int32_t process_set,
                               runrun_handle** out) {
  return guarded([&] {
    require(out != nullptr, "runrun_broadcast: out is null");
    runrun::Runtime& r = runtime_of(rt);
    int rank = r.topology().rank;
    runrun::TensorView in = view("broadcast", name, rank, input, "input");
    AllocatedOutputs allocated;
    runrun::TensorView result =
        allocated.output(runrun::OpType::kBroadcast, name, rank, 0, in, output, "broadcast");
    std::shared_ptr<runrun::Handle> handle =
        r.broadcast(name_of(name), in, result, root_rank, process_set);
    allocated.hand_to(*handle);
    give(std::move(handle), out);
  });
}

runrun_status runrun_barrier(runrun_runtime* rt, int32_t process_set, runrun_handle** out) {
  return guarded([&] {
    require(out != nullptr, "runrun_barrier: out is null");
    give(runtime_of(rt).barrier(process_set), out);
  });
}

runrun_status runrun_alltoall(runrun_runtime* rt, const char* name, const DLTensor* input,
                              const int64_t* splits, size_t num_splits, int32_t process_set,
                              runrun_handle** out) {
  return guarded([&] {
    require(out != nullptr, "runrun_alltoall: out is null");
    runrun::Runtime& r = runtime_of(rt);
    std::vector<int64_t> s;
    if (splits) s.assign(splits, splits + num_splits);
    give(r.alltoall(name_of(name), view("alltoall", name, r.topology().rank, input, "input"), s,
                    process_set),
         out);
  });
}

runrun_status runrun_reducescatter(runrun_runtime* rt, const char* name, const DLTensor* input,
                                   const runrun_allreduce_options* options, runrun_handle** out) {
  return runrun_grouped_reducescatter(rt, &name, &input, 1, options, out);
}

runrun_status runrun_grouped_reducescatter(runrun_runtime* rt, const char* const* names,
                                           const DLTensor* const* inputs, size_t n,
                                           const runrun_allreduce_options* options,
                                           runrun_handle** out) {
  return guarded([&] {
    require(out && names && inputs, "runrun_grouped_reducescatter: null argument");
    runrun::Runtime& r = runtime_of(rt);
    GroupArgs args = group_args("reducescatter", r.topology().rank, names, inputs, n);
    give(r.reducescatter(args.names, args.inputs, options_of(options)), out);
  });
}

runrun_status runrun_join(runrun_runtime* rt, int32_t process_set, runrun_handle** out) {
  return guarded([&] {
    require(out != nullptr, "runrun_join: out is null");
    give(runtime_of(rt).join(process_set), out);
  });
}

}  // extern "C"

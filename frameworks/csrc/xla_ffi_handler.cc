// The XLA FFI handlers of runrun.jax's native jit path (xla_ffi_targets.h), against the C API
// header (and its dtype rules, runrun/dlpack_rules.h) only.
//
// Call frame (frameworks/python/runrun/jax/ffi_ops.py builds it): args = [token, inputs...],
// rets = [token, outputs...]; the token is JAX's ordered-effect token, threaded by XLA through
// every runrun op (and every ordered io_callback) of the program and, by JAX's runtime token,
// across executions, so this process runs its jit collectives one at a time in program order:
// the same order on every rank. The handler therefore may block its XLA thread until the op
// completes (the runtime's own thread makes progress; peers run the same sequence), and an
// unnamed op can be named at execution time from a per-process counter, as eager ops are.
// Attributes: kind, name ("" = unnamed), op, prescale, postscale, process_set, root_rank,
// profile (the id of the profiler that asked for the call's start and end, 0: none; recorded
// in xla_ffi_profile.h's ring for runrun --profile).
// A second target, "runrun_profile_mark" (mark), ends a profiled step: args = [token,
// the step's updated arrays...] (a data dependence only), rets = [token], attribute profile.
// Platforms: the same target name is registered for the CPU (xla_ffi_collective_cpu: host
// buffers) and for CUDA (xla_ffi_collective_cuda: device buffers of the call's device on XLA's
// stream, set as this thread's CUDA stream for the op, so the C API orders the op after the
// stream's earlier work and XLA's later work after the op: docs/gpu.md "Streams"; over NCCL the
// host waits only for the op's launch; staged through the host, it also waits for the copies
// of the inputs, which wait for the stream's earlier work).
// Threading: XLA calls them on its threads; one op per call; the counters take a mutex.

#include <dlpack/dlpack.h>
#include <runrun/dlpack_rules.h>
#include <xla/ffi/api/c_api.h>

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "csrc/xla_ffi_profile.h"
#include "csrc/xla_ffi_runtime.h"
#include "csrc/xla_ffi_targets.h"

namespace runrun::python {
namespace {

enum Kind : int32_t {
  kAllreduce = 0,
  kGroupedAllreduce = 1,
  kBroadcast = 2,
  kAllgather = 3,
  kAlltoall = 4,
  kReducescatter = 5,
};

const char* kind_name(int32_t kind) {
  switch (kind) {
    case kAllreduce:
      return "allreduce";
    case kGroupedAllreduce:
      return "grouped_allreduce";
    case kBroadcast:
      return "broadcast";
    case kAllgather:
      return "allgather";
    case kAlltoall:
      return "alltoall";
    case kReducescatter:
      return "reducescatter";
    default:
      return "unknown";
  }
}

// runrun.common.exceptions' class for a status: the prefix of the message JAX raises.
const char* class_name(runrun_status status) {
  switch (status) {
    case RUNRUN_INVALID_ARGUMENT:
      return "InvalidArgumentError";
    case RUNRUN_MISMATCH:
      return "MismatchError";
    case RUNRUN_PEER_FAILURE:
      return "PeerFailureError";
    case RUNRUN_TIMEOUT:
      return "CollectiveTimeoutError";
    case RUNRUN_SHUT_DOWN:
      return "ShutDownError";
    case RUNRUN_UNSUPPORTED:
      return "UnsupportedError";
    default:
      return "HorovodInternalError";
  }
}

XLA_FFI_Error* make_error(const XLA_FFI_Api* api, const std::string& message) {
  XLA_FFI_Error_Create_Args args{};
  args.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
  args.message = message.c_str();  // XLA copies it
  args.errc = XLA_FFI_Error_Code_INTERNAL;
  return api->XLA_FFI_Error_Create(&args);
}

// --- unnamed ops: "<op>.jit.<n>" ("<op>.set<id>.jit.<n>"), counted per op and set ------------
std::mutex g_names_mutex;
std::map<std::pair<std::string, int32_t>, uint64_t> g_counters;  // guarded by g_names_mutex

std::string op_name(const std::string& given, const char* op, int32_t set) {
  if (!given.empty()) return given;
  std::lock_guard<std::mutex> lock(g_names_mutex);
  uint64_t n = g_counters[{op, set}]++;
  std::string prefix = set == 0 ? op : std::string(op) + ".set" + std::to_string(set);
  return prefix + ".jit." + std::to_string(n);
}

// --- decoding the call frame -------------------------------------------------------------
struct Attrs {
  int32_t kind = -1, op = RUNRUN_OP_AVERAGE, process_set = 0, root_rank = 0, profile = 0;
  double prescale = 1.0, postscale = 1.0;
  std::string name;
};

bool decode_attrs(const XLA_FFI_Attrs& attrs, Attrs* out, std::string* error) {
  for (int64_t i = 0; i < attrs.size; ++i) {
    std::string_view key(attrs.names[i]->ptr, attrs.names[i]->len);
    if (attrs.types[i] == XLA_FFI_AttrType_STRING && key == "name") {
      auto* span = static_cast<XLA_FFI_ByteSpan*>(attrs.attrs[i]);
      out->name.assign(span->ptr, span->len);
      continue;
    }
    if (attrs.types[i] != XLA_FFI_AttrType_SCALAR) {
      *error = "unexpected attribute '" + std::string(key) + "'";
      return false;
    }
    auto* scalar = static_cast<XLA_FFI_Scalar*>(attrs.attrs[i]);
    if (scalar->dtype == XLA_FFI_DataType_S32) {
      int32_t v = *static_cast<int32_t*>(scalar->value);
      if (key == "kind")
        out->kind = v;
      else if (key == "op")
        out->op = v;
      else if (key == "process_set")
        out->process_set = v;
      else if (key == "root_rank")
        out->root_rank = v;
      else if (key == "profile")
        out->profile = v;
    } else if (scalar->dtype == XLA_FFI_DataType_F64) {
      double v = *static_cast<double*>(scalar->value);
      if (key == "prescale")
        out->prescale = v;
      else if (key == "postscale")
        out->postscale = v;
    }
  }
  if (out->kind < kAllreduce || out->kind > kReducescatter) {
    *error = "missing or unknown 'kind' attribute";
    return false;
  }
  return true;
}

bool to_dl_dtype(XLA_FFI_DataType t, DLDataType* out) {
  switch (t) {
    case XLA_FFI_DataType_PRED:
      *out = {dlpack_rules::kDLPackBool, 8, 1};
      return true;
    case XLA_FFI_DataType_S8:
      *out = {kDLInt, 8, 1};
      return true;
    case XLA_FFI_DataType_S16:
      *out = {kDLInt, 16, 1};
      return true;
    case XLA_FFI_DataType_S32:
      *out = {kDLInt, 32, 1};
      return true;
    case XLA_FFI_DataType_S64:
      *out = {kDLInt, 64, 1};
      return true;
    case XLA_FFI_DataType_U8:
      *out = {kDLUInt, 8, 1};
      return true;
    case XLA_FFI_DataType_F16:
      *out = {kDLFloat, 16, 1};
      return true;
    case XLA_FFI_DataType_F32:
      *out = {kDLFloat, 32, 1};
      return true;
    case XLA_FFI_DataType_F64:
      *out = {kDLFloat, 64, 1};
      return true;
    case XLA_FFI_DataType_BF16:
      *out = {kDLBfloat, 16, 1};
      return true;
    default:
      return false;
  }
}

bool to_dl_tensor(void* arg, DLDevice device, DLTensor* out, std::string* error) {
  auto* buffer = static_cast<XLA_FFI_Buffer*>(arg);
  if (!to_dl_dtype(buffer->dtype, &out->dtype)) {
    *error = "unsupported XLA dtype " + std::to_string(static_cast<int>(buffer->dtype));
    return false;
  }
  out->data = buffer->data;
  out->device = device;
  out->ndim = static_cast<int32_t>(buffer->rank);
  out->shape = buffer->dims;
  out->strides = nullptr;  // XLA passes row-major buffers (ffi_ops.py asks for that layout)
  out->byte_offset = 0;
  return true;
}

size_t nbytes(const DLTensor& t) {
  size_t n = (t.dtype.bits * t.dtype.lanes + 7) / 8;
  for (int32_t d = 0; d < t.ndim; ++d) n *= static_cast<size_t>(t.shape[d]);
  return n;
}

std::string shape_string(const int64_t* dims, int32_t ndim) {
  std::string s = "(";
  for (int32_t d = 0; d < ndim; ++d) s += (d ? ", " : "") + std::to_string(dims[d]);
  return s + (ndim == 1 ? ",)" : ")");
}

// Copies the runtime-allocated output of `h` into XLA's `out` buffer (on a device: in order on
// the call's stream, which the runtime's copy is then freed on); checks the shape jit traced
// (inside jit every rank must pass the same first dimension).
bool take_output(runrun_handle* h, const DLTensor& out, const Attrs& a, const std::string& name,
                 std::string* error) {
  DLManagedTensor* taken = nullptr;
  if (runrun_handle_take_output(h, &taken) != RUNRUN_OK) {
    *error = std::string("HorovodInternalError: ") + runrun_last_error();
    return false;
  }
  const DLTensor& t = taken->dl_tensor;
  bool same = t.ndim == out.ndim;
  for (int32_t d = 0; same && d < t.ndim; ++d) same = t.shape[d] == out.shape[d];
  if (same && t.device.device_type != out.device.device_type) {
    // The runtime allocates on the input's device; a host output here could be freed (below)
    // before the stream ran the copy out of it.
    *error = std::string("HorovodInternalError: ") + kind_name(a.kind) + " '" + name +
             "': the runtime's output is not on the device of XLA's result";
    same = false;
  } else if (same) {
    const runrun_status status = runrun_copy_tensor(&t, &out);
    if (status != RUNRUN_OK) {
      *error = std::string(class_name(status)) + ": " + runrun_last_error();
      same = false;
    }
  } else {
    *error = std::string("InvalidArgumentError: ") + kind_name(a.kind) + " '" + name +
             "' inside jax.jit: the result has shape " + shape_string(t.shape, t.ndim) +
             " but the traced program expects " + shape_string(out.shape, out.ndim) +
             ": inside jit every rank must pass the same first dimension (uneven sizes work "
             "outside jit)";
  }
  if (taken->deleter) taken->deleter(taken);
  return same;
}

// Enqueues the op, waits for it and fills the outputs; "" or the error message.
std::string run_op(runrun_runtime* rt, const Attrs& a, std::vector<DLTensor>& in,
                   std::vector<DLTensor>& out) {
  const std::string name = op_name(a.name, kind_name(a.kind), a.process_set);
  runrun_allreduce_options options = runrun_allreduce_default_options();
  options.op = static_cast<runrun_reduce_op>(a.op);
  options.prescale_factor = a.prescale;
  options.postscale_factor = a.postscale;
  options.process_set = a.process_set;
  runrun_handle* h = nullptr;
  runrun_status status = RUNRUN_INTERNAL;
  std::vector<std::string> names;
  switch (a.kind) {
    case kAllreduce:
      status = runrun_allreduce(rt, name.c_str(), &in[0], &out[0], &options, &h);
      break;
    case kGroupedAllreduce: {
      std::vector<const char*> name_ptrs;
      std::vector<const DLTensor*> ins, outs;
      for (size_t i = 0; i < in.size(); ++i) names.push_back(name + "." + std::to_string(i));
      for (size_t i = 0; i < in.size(); ++i) {
        name_ptrs.push_back(names[i].c_str());
        ins.push_back(&in[i]);
        outs.push_back(&out[i]);
      }
      status = runrun_grouped_allreduce(rt, name_ptrs.data(), ins.data(), outs.data(), in.size(),
                                        &options, &h);
      break;
    }
    case kBroadcast:
      status = runrun_broadcast(rt, name.c_str(), &in[0], &out[0], a.root_rank, a.process_set, &h);
      break;
    case kAllgather:
      status = runrun_allgather(rt, name.c_str(), &in[0], a.process_set, &h);
      break;
    case kAlltoall:
      status = runrun_alltoall(rt, name.c_str(), &in[0], nullptr, 0, a.process_set, &h);
      break;
    case kReducescatter:
      status = runrun_reducescatter(rt, name.c_str(), &in[0], &options, &h);
      break;
  }
  if (status != RUNRUN_OK) return std::string(class_name(status)) + ": " + runrun_last_error();
  status = runrun_handle_wait(h, -1.0);  // bounded by the runtime's timeouts (docs/jax.md)
  std::string error;
  if (status != RUNRUN_OK) {
    error = std::string(class_name(status)) + ": " + runrun_handle_error(h);
  } else if (a.kind == kAllgather || a.kind == kAlltoall || a.kind == kReducescatter) {
    take_output(h, out[0], a, name, &error);
  }
  runrun_handle_release(h);
  return error;
}

XLA_FFI_Error* populate_metadata(XLA_FFI_CallFrame* frame) {
  auto* extension = reinterpret_cast<XLA_FFI_Metadata_Extension*>(frame->extension_start);
  if (extension->metadata == nullptr ||
      extension->metadata->struct_size < XLA_FFI_Metadata_STRUCT_SIZE) {
    return make_error(frame->api, "runrun XLA FFI handler: unexpected XLA_FFI_Metadata size");
  }
  extension->metadata->api_version = XLA_FFI_Api_Version{XLA_FFI_Api_Version_STRUCT_SIZE, nullptr,
                                                         XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR};
  extension->metadata->traits = 0;
  return nullptr;
}

// The checks every call of both targets starts with. Sets *done (and returns the answer) for a
// call that is not an execution: the ABI check refuses a call frame or API of another major
// version with what to do (XLA also checks the metadata when the target is registered).
XLA_FFI_Error* preamble(XLA_FFI_CallFrame* frame, bool* done) {
  *done = true;
  if (frame->struct_size < XLA_FFI_CallFrame_STRUCT_SIZE ||
      frame->api->api_version.major_version != XLA_FFI_API_MAJOR) {
    return make_error(frame->api,
                      "runrun's XLA FFI handler was built for XLA FFI API " +
                          std::to_string(XLA_FFI_API_MAJOR) + "." +
                          std::to_string(XLA_FFI_API_MINOR) +
                          ", which this jaxlib does not provide: rebuild runrun against it or "
                          "set RUNRUN_JAX_JIT_PATH=callback");
  }
  if (frame->extension_start != nullptr &&
      frame->extension_start->type == XLA_FFI_Extension_Metadata) {
    return populate_metadata(frame);
  }
  *done = frame->stage != XLA_FFI_ExecutionStage_EXECUTE;
  return nullptr;
}

// The call's device and stream: the host for the CPU target; for the CUDA target XLA's device
// ordinal and stream (XLA_FFI_DeviceOrdinal_Get, XLA_FFI_Stream_Get).
struct Placement {
  DLDevice device{kDLCPU, 0};
  void* stream = nullptr;
};

XLA_FFI_Error* cuda_placement(XLA_FFI_CallFrame* frame, Placement* out) {
  const XLA_FFI_Api* api = frame->api;
  constexpr size_t kNeeded =
      offsetof(XLA_FFI_Api, XLA_FFI_DeviceOrdinal_Get) + sizeof(api->XLA_FFI_DeviceOrdinal_Get);
  if (api->struct_size < kNeeded || api->XLA_FFI_DeviceOrdinal_Get == nullptr ||
      api->XLA_FFI_Stream_Get == nullptr) {
    return make_error(api,
                      "runrun XLA FFI handler: this jaxlib's XLA FFI API has no device "
                      "ordinal or stream query (API " +
                          std::to_string(api->api_version.major_version) + "." +
                          std::to_string(api->api_version.minor_version) +
                          "): upgrade jaxlib or set RUNRUN_JAX_JIT_PATH=callback");
  }
  XLA_FFI_DeviceOrdinal_Get_Args ordinal{};
  ordinal.struct_size = XLA_FFI_DeviceOrdinal_Get_Args_STRUCT_SIZE;
  ordinal.ctx = frame->ctx;
  if (XLA_FFI_Error* e = api->XLA_FFI_DeviceOrdinal_Get(&ordinal)) return e;
  XLA_FFI_Stream_Get_Args stream{};
  stream.struct_size = XLA_FFI_Stream_Get_Args_STRUCT_SIZE;
  stream.ctx = frame->ctx;
  if (XLA_FFI_Error* e = api->XLA_FFI_Stream_Get(&stream)) return e;
  out->device = DLDevice{kDLCUDA, ordinal.device_ordinal};
  out->stream = stream.stream;
  return nullptr;
}

// This thread's CUDA stream (runrun_set_cuda_stream) is XLA's for the scope of one op, then what
// it was: XLA's threads run other custom calls too.
class StreamScope {
 public:
  explicit StreamScope(const Placement& p) : active_(p.device.device_type == kDLCUDA) {
    if (!active_) return;
    previous_ = runrun_cuda_stream();
    runrun_set_cuda_stream(p.stream);
  }
  ~StreamScope() {
    if (active_) runrun_set_cuda_stream(previous_);
  }
  StreamScope(const StreamScope&) = delete;
  StreamScope& operator=(const StreamScope&) = delete;

 private:
  bool active_;
  void* previous_ = nullptr;
};

enum class Platform { kCpu, kCuda };

XLA_FFI_Error* collective(XLA_FFI_CallFrame* frame, Platform platform) {
  bool done = false;
  XLA_FFI_Error* answer = preamble(frame, &done);
  if (done) return answer;

  Attrs a;
  std::string error;
  if (!decode_attrs(frame->attrs, &a, &error)) {
    return make_error(frame->api, "runrun XLA FFI handler: " + error);
  }
  const int64_t n = frame->args.size - 1;  // [token, inputs...]
  if (n < 1 || frame->rets.size != n + 1 || (a.kind != kGroupedAllreduce && n != 1)) {
    return make_error(frame->api, std::string("runrun XLA FFI handler: ") + kind_name(a.kind) +
                                      " got " + std::to_string(frame->args.size) +
                                      " operands and " + std::to_string(frame->rets.size) +
                                      " results");
  }
  Placement placement;
  if (platform == Platform::kCuda) {
    if (XLA_FFI_Error* e = cuda_placement(frame, &placement)) return e;
  }
  std::vector<DLTensor> in(static_cast<size_t>(n)), out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    if (!to_dl_tensor(frame->args.args[i + 1], placement.device, &in[i], &error) ||
        !to_dl_tensor(frame->rets.rets[i + 1], placement.device, &out[i], &error)) {
      return make_error(frame->api, "runrun XLA FFI handler: " + error);
    }
  }
  RuntimeLease lease;
  if (lease.get() == nullptr) {
    return make_error(frame->api, std::string("NotInitializedError: ") + kind_name(a.kind) +
                                      " inside jax.jit ran before runrun.jax.init() (or after "
                                      "shutdown()): call init() first");
  }
  StreamScope stream(placement);
  const double start = a.profile ? profile_clock() : 0.0;
  error = run_op(lease.get(), a, in, out);
  if (a.profile && error.empty()) {
    size_t bytes = 0;
    for (const DLTensor& t : in) bytes += nbytes(t);
    profile_record_allreduce(a.profile, start, profile_clock(), bytes);
  }
  return error.empty() ? nullptr : make_error(frame->api, error);
}

}  // namespace

XLA_FFI_Error* xla_ffi_collective_cpu(XLA_FFI_CallFrame* frame) {
  return collective(frame, Platform::kCpu);
}

XLA_FFI_Error* xla_ffi_collective_cuda(XLA_FFI_CallFrame* frame) {
  return collective(frame, Platform::kCuda);
}

// runrun_profile_mark: the profiled step's update is computed (on the CPU its operands are
// ready; on CUDA the host has only reached this point of the program: docs/gpu.md).
XLA_FFI_Error* xla_ffi_profile_mark(XLA_FFI_CallFrame* frame) {
  bool done = false;
  XLA_FFI_Error* answer = preamble(frame, &done);
  if (done) return answer;
  const XLA_FFI_Attrs& attrs = frame->attrs;
  for (int64_t i = 0; i < attrs.size; ++i) {
    std::string_view key(attrs.names[i]->ptr, attrs.names[i]->len);
    auto* scalar = static_cast<XLA_FFI_Scalar*>(attrs.attrs[i]);
    if (key == "profile" && attrs.types[i] == XLA_FFI_AttrType_SCALAR &&
        scalar->dtype == XLA_FFI_DataType_S32) {
      profile_record_step_end(*static_cast<int32_t*>(scalar->value));
      return nullptr;
    }
  }
  return make_error(frame->api, "runrun_profile_mark: missing int32 attribute 'profile'");
}

void xla_ffi_forget_names(int32_t set) {
  std::lock_guard<std::mutex> lock(g_names_mutex);
  for (auto it = g_counters.begin(); it != g_counters.end();) {
    it = (set < 0 || it->first.second == set) ? g_counters.erase(it) : std::next(it);
  }
}

}  // namespace runrun::python

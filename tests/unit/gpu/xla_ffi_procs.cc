// runrun.jax's XLA FFI handlers in real processes, driven as XLA drives them but with call frames
// built here (issue 11 point 1, ops on GPU arrays inside jax.jit; docs/gpu.md "Inside jax.jit"):
// no GPU and no jaxlib at run time. Each rank is a process of `runrun --gloo`; it calls the CPU
// target on host buffers and the CUDA target on device buffers of the fake CUDA runtime
// (fake_cuda_runtime.cc, opened through RUNRUN_CUDART_LIBRARY, FAKE_CUDA_DELAY_US making stream
// work late), with XLA's stream and device ordinal answered by a fake XLA FFI API. The inputs
// are written on that stream and not waited for, and the outputs are read back on it: a result
// is right only when the op ran after the stream's earlier work and the stream's later work
// after the op. Every kind and the errors a jit user sees are checked exactly; exits 0 when all
// passed.

#include <xla/ffi/api/c_api.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "csrc/xla_ffi_profile.h"
#include "csrc/xla_ffi_runtime.h"
#include "csrc/xla_ffi_targets.h"
#include "fake_cuda.h"
#include "runrun/c_api.h"

// The opaque types of the XLA FFI API, as this fake of XLA defines them.
struct XLA_FFI_Error {
  std::string message;
};
struct XLA_FFI_ExecutionContext {
  void* stream;
  int32_t device;
};

namespace {

using runrun::python::xla_ffi_collective_cpu;
using runrun::python::xla_ffi_collective_cuda;
using runrun::python::xla_ffi_profile_mark;

int failures = 0;
int rank = 0;

void expect(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "rank %d: %s\n", rank, what.c_str());
  ++failures;
}

// --- the fake XLA: the three API calls the handlers make ------------------------------------
XLA_FFI_Error* create_error(XLA_FFI_Error_Create_Args* args) {
  return new XLA_FFI_Error{args->message};
}
XLA_FFI_Error* get_stream(XLA_FFI_Stream_Get_Args* args) {
  args->stream = args->ctx->stream;
  return nullptr;
}
XLA_FFI_Error* get_device_ordinal(XLA_FFI_DeviceOrdinal_Get_Args* args) {
  args->device_ordinal = args->ctx->device;
  return nullptr;
}

XLA_FFI_Api fake_api() {
  XLA_FFI_Api api{};
  api.struct_size = XLA_FFI_Api_STRUCT_SIZE;
  api.api_version = {XLA_FFI_Api_Version_STRUCT_SIZE, nullptr, XLA_FFI_API_MAJOR,
                     XLA_FFI_API_MINOR};
  api.XLA_FFI_Error_Create = &create_error;
  api.XLA_FFI_Stream_Get = &get_stream;
  api.XLA_FFI_DeviceOrdinal_Get = &get_device_ordinal;
  return api;
}

// Where the buffers of one platform live: host vectors, or fake device memory written and read
// in order on XLA's stream (the host copies are kept until the stream ran them).
class Memory {
 public:
  Memory(bool cuda, CUstream_st* stream) : cuda_(cuda), stream_(stream) {}

  void* make(const std::vector<float>& values) {
    const size_t bytes = values.size() * sizeof(float);
    if (!cuda_) {
      host_.emplace_back(values.size() ? values : std::vector<float>(1));
      return host_.back().data();
    }
    device_.push_back(std::make_unique<runrun::testing::DeviceBytes>(bytes));
    staged_.emplace_back(bytes);
    std::memcpy(staged_.back().data(), values.data(), bytes);
    device_.back()->write_async(staged_.back(), stream_);  // not waited for: the op must be
    return device_.back()->data();
  }

  std::vector<float> read(const void* data, size_t count) const {
    std::vector<float> values(count);
    if (!cuda_) {
      std::memcpy(values.data(), data, count * sizeof(float));
      return values;
    }
    auto raw = runrun::testing::DeviceBytes::read(data, count * sizeof(float), stream_);
    std::memcpy(values.data(), raw.data(), raw.size());
    return values;
  }

 private:
  bool cuda_;
  CUstream_st* stream_;
  std::deque<std::vector<float>> host_;
  std::deque<std::unique_ptr<runrun::testing::DeviceBytes>> device_;
  std::deque<std::vector<std::byte>> staged_;
};

// One custom call's frame, built as XLA builds it: [token, inputs...] -> [token, outputs...].
class Call {
 public:
  Call(const XLA_FFI_Api* api, XLA_FFI_ExecutionContext* ctx, int32_t kind) : api_(api), ctx_(ctx) {
    add_i32("kind", kind);
    add_buffer(args_, XLA_FFI_DataType_TOKEN, nullptr, {});
    add_buffer(rets_, XLA_FFI_DataType_TOKEN, nullptr, {});
  }
  Call& i32(const char* name, int32_t v) { return add_i32(name, v); }
  Call& f64(const char* name, double v) {
    auto& value = f64s_.emplace_back(v);
    return add_scalar(name, XLA_FFI_DataType_F64, &value);
  }
  Call& str(const char* name, const char* v) {
    spans_.push_back({v, std::strlen(v)});
    return add_attr(name, XLA_FFI_AttrType_STRING, &spans_.back());
  }
  Call& in(void* data, std::vector<int64_t> dims) {
    add_buffer(args_, XLA_FFI_DataType_F32, data, std::move(dims));
    return *this;
  }
  Call& out(void* data, std::vector<int64_t> dims) {
    add_buffer(rets_, XLA_FFI_DataType_F32, data, std::move(dims));
    return *this;
  }

  // The handler's answer: "" or its error message. With `metadata`, the call XLA makes when the
  // target is registered, which asks for the handler's API version and traits.
  std::string run(XLA_FFI_Handler* handler, XLA_FFI_Metadata* metadata = nullptr) {
    std::vector<XLA_FFI_ArgType> arg_types(args_.size(), XLA_FFI_ArgType_BUFFER);
    std::vector<XLA_FFI_RetType> ret_types(rets_.size(), XLA_FFI_RetType_BUFFER);
    std::vector<void*> args, rets;
    for (auto& b : args_) args.push_back(&b);
    for (auto& b : rets_) rets.push_back(&b);
    XLA_FFI_CallFrame frame{};
    frame.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
    frame.api = api_;
    frame.ctx = ctx_;
    frame.stage = XLA_FFI_ExecutionStage_EXECUTE;
    frame.args = {XLA_FFI_Args_STRUCT_SIZE, nullptr, static_cast<int64_t>(args.size()),
                  arg_types.data(), args.data()};
    frame.rets = {XLA_FFI_Rets_STRUCT_SIZE, nullptr, static_cast<int64_t>(rets.size()),
                  ret_types.data(), rets.data()};
    frame.attrs = {XLA_FFI_Attrs_STRUCT_SIZE,
                   nullptr,
                   static_cast<int64_t>(names_.size()),
                   types_.data(),
                   name_ptrs_.data(),
                   values_.data()};
    XLA_FFI_Metadata_Extension extension{
        {XLA_FFI_Metadata_Extension_STRUCT_SIZE, XLA_FFI_Extension_Metadata, nullptr}, metadata};
    if (metadata != nullptr) {
      frame.extension_start = &extension.extension_base;
      frame.stage = XLA_FFI_ExecutionStage_INSTANTIATE;
    }
    std::unique_ptr<XLA_FFI_Error> error(handler(&frame));
    return error ? error->message : "";
  }

 private:
  Call& add_i32(const char* name, int32_t v) {
    auto& value = i32s_.emplace_back(v);
    return add_scalar(name, XLA_FFI_DataType_S32, &value);
  }
  Call& add_scalar(const char* name, XLA_FFI_DataType dtype, void* value) {
    scalars_.push_back({dtype, value});
    return add_attr(name, XLA_FFI_AttrType_SCALAR, &scalars_.back());
  }
  Call& add_attr(const char* name, XLA_FFI_AttrType type, void* value) {
    names_.push_back({name, std::strlen(name)});
    name_ptrs_.push_back(&names_.back());
    types_.push_back(type);
    values_.push_back(value);
    return *this;
  }
  void add_buffer(std::deque<XLA_FFI_Buffer>& to, XLA_FFI_DataType dtype, void* data,
                  std::vector<int64_t> dims) {
    auto& kept = dims_.emplace_back(std::move(dims));
    to.push_back({XLA_FFI_Buffer_STRUCT_SIZE, nullptr, dtype, data,
                  static_cast<int64_t>(kept.size()), kept.data()});
  }

  const XLA_FFI_Api* api_;
  XLA_FFI_ExecutionContext* ctx_;
  std::deque<int32_t> i32s_;  // deques: the frame points into them
  std::deque<double> f64s_;
  std::deque<XLA_FFI_ByteSpan> spans_, names_;
  std::deque<XLA_FFI_Scalar> scalars_;
  std::deque<std::vector<int64_t>> dims_;
  std::deque<XLA_FFI_Buffer> args_, rets_;
  std::vector<XLA_FFI_ByteSpan*> name_ptrs_;
  std::vector<XLA_FFI_AttrType> types_;
  std::vector<void*> values_;
};

enum Kind : int32_t { kAllreduce, kGrouped, kBroadcast, kAllgather, kAlltoall, kReducescatter };

std::vector<float> iota(size_t n, float first, float step = 1.f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = first + step * static_cast<float>(i);
  return v;
}

void expect_ok(const std::string& answer, const std::string& what) {
  expect(answer.empty(), what + " failed: " + answer);
}

// The reductions and the broadcast through `handler` on `memory`'s platform; `tag` keeps the
// names apart.
void run_reductions(XLA_FFI_Handler* handler, const XLA_FFI_Api* api, XLA_FFI_ExecutionContext* ctx,
                    Memory& m, int size, const std::string& tag) {
  {  // allreduce, sum, prescale 2 and postscale 0.25: (sum over ranks of 10 r + i) / 2
    void* x = m.make(iota(5, 10.f * rank));
    void* y = m.make(std::vector<float>(5, -1.f));
    const std::string name = tag + ".sum";
    expect_ok(Call(api, ctx, kAllreduce)
                  .str("name", name.c_str())
                  .i32("op", RUNRUN_OP_SUM)
                  .f64("prescale", 2.0)
                  .f64("postscale", 0.25)
                  .in(x, {5})
                  .out(y, {5})
                  .run(handler),
              tag + " allreduce");
    const float ranks = 10.f * static_cast<float>(size * (size - 1) / 2);
    expect(m.read(y, 5) == iota(5, ranks / 2, static_cast<float>(size) / 2), tag + " allreduce");
    expect(m.read(x, 5) == iota(5, 10.f * rank), tag + " allreduce left its input");
  }
  {  // grouped allreduce, average, unnamed (named "grouped_allreduce.jit.<n>" on every rank)
    void* a = m.make({1.f * rank, 2.f});
    void* b = m.make(iota(3, 3.f * rank));
    void* a_out = m.make({0.f, 0.f});
    void* b_out = m.make({0.f, 0.f, 0.f});
    expect_ok(
        Call(api, ctx, kGrouped).in(a, {2}).in(b, {3}).out(a_out, {2}).out(b_out, {3}).run(handler),
        tag + " grouped allreduce");
    const float mean = static_cast<float>(size - 1) / 2;
    expect(m.read(a_out, 2) == std::vector<float>{mean, 2.f}, tag + " grouped allreduce [0]");
    expect(m.read(b_out, 3) == iota(3, 3 * mean), tag + " grouped allreduce [1]");
  }
  {  // broadcast from the last rank
    void* x = m.make({10.f * rank, 1.f});
    void* y = m.make({0.f, 0.f});
    expect_ok(
        Call(api, ctx, kBroadcast).i32("root_rank", size - 1).in(x, {2}).out(y, {2}).run(handler),
        tag + " broadcast");
    expect(m.read(y, 2) == std::vector<float>{10.f * (size - 1), 1.f}, tag + " broadcast");
  }
}

// The gathers, the reducescatter and a traced shape the data does not give, as above.
void run_gathers(XLA_FFI_Handler* handler, const XLA_FFI_Api* api, XLA_FFI_ExecutionContext* ctx,
                 Memory& m, int size, const std::string& tag) {
  const auto n = static_cast<int64_t>(size);
  {  // allgather of 2 x 3 rows per rank: the output is allocated by the runtime, then copied
    void* x = m.make(iota(6, 100.f * rank));
    void* y = m.make(std::vector<float>(6 * static_cast<size_t>(size), -1.f));
    expect_ok(Call(api, ctx, kAllgather).in(x, {2, 3}).out(y, {2 * n, 3}).run(handler),
              tag + " allgather");
    std::vector<float> expected;
    for (int r = 0; r < size; ++r) {
      for (float v : iota(6, 100.f * r)) expected.push_back(v);
    }
    expect(m.read(y, expected.size()) == expected, tag + " allgather");
  }
  {  // alltoall, equal splits: row p of rank r (100 r + p) goes to rank p
    void* x = m.make(iota(static_cast<size_t>(size), 100.f * rank));
    void* y = m.make(std::vector<float>(static_cast<size_t>(size), -1.f));
    expect_ok(Call(api, ctx, kAlltoall).in(x, {n}).out(y, {n}).run(handler), tag + " alltoall");
    expect(m.read(y, static_cast<size_t>(size)) == iota(static_cast<size_t>(size), rank, 100.f),
           tag + " alltoall");
  }
  {  // reducescatter, sum of 2n + 1 rows: rank 0 gets one row more
    const int64_t rows = 2 * n + 1, mine = rank == 0 ? 3 : 2, first = rank == 0 ? 0 : 1 + 2 * rank;
    void* x = m.make(iota(static_cast<size_t>(rows), 0.f));
    void* y = m.make(std::vector<float>(static_cast<size_t>(mine), -1.f));
    expect_ok(Call(api, ctx, kReducescatter)
                  .i32("op", RUNRUN_OP_SUM)
                  .in(x, {rows})
                  .out(y, {mine})
                  .run(handler),
              tag + " reducescatter");
    expect(m.read(y, static_cast<size_t>(mine)) == iota(static_cast<size_t>(mine),
                                                        static_cast<float>(first * size),
                                                        static_cast<float>(size)),
           tag + " reducescatter");
  }
  {  // a traced shape the ranks' data does not give: jit's message, on every rank
    void* x = m.make(iota(2, 0.f));
    void* y = m.make(std::vector<float>(3 * static_cast<size_t>(size), -1.f));
    const std::string name = tag + ".short";
    const std::string error = Call(api, ctx, kAllgather)
                                  .str("name", name.c_str())
                                  .in(x, {2})
                                  .out(y, {3 * n})
                                  .run(handler);
    expect(error.find("InvalidArgumentError: allgather '" + name +
                      "' inside jax.jit: the "
                      "result has shape (" +
                      std::to_string(2 * n) +
                      ",) but the traced program "
                      "expects (" +
                      std::to_string(3 * n) + ",)") == 0,
           tag + " shape mismatch: got '" + error + "'");
  }
}

// Every kind through `handler` on `memory`'s platform; `tag` keeps the names apart.
void run_every_kind(XLA_FFI_Handler* handler, const XLA_FFI_Api* api, XLA_FFI_ExecutionContext* ctx,
                    Memory& m, int size, const std::string& tag) {
  run_reductions(handler, api, ctx, m, size, tag);
  run_gathers(handler, api, ctx, m, size, tag);
}

// Before init(): the error a script sees when it calls a jitted op too early.
void check_before_init(const XLA_FFI_Api* api, CUstream_st* stream) {
  XLA_FFI_ExecutionContext ctx{stream, 0};
  float x = 1.f, y = 0.f;
  const std::string error =
      Call(api, &ctx, kAllreduce).in(&x, {}).out(&y, {}).run(&xla_ffi_collective_cpu);
  expect(error.find("NotInitializedError: allreduce inside jax.jit ran before "
                    "runrun.jax.init()") == 0,
         "before init: got '" + error + "'");
}

// A device this process cannot use (the fake has 4): the error names it.
void check_far_device(const XLA_FFI_Api* api, CUstream_st* stream) {
  XLA_FFI_ExecutionContext far{stream, 9};
  float x = 1.f, y = 0.f;
  const std::string error = Call(api, &far, kAllreduce)
                                .str("name", "far")
                                .in(&x, {})
                                .out(&y, {})
                                .run(&xla_ffi_collective_cuda);
  expect(error.find("cuda:9") != std::string::npos, "device 9: got '" + error + "'");
}

// An op that fails after it was enqueued (shapes differ between ranks): its class and message,
// and the thread's own stream back.
void check_failed_op(const XLA_FFI_Api* api, XLA_FFI_ExecutionContext* cuda_ctx, Memory& device,
                     CUstream_st* thread_stream) {
  void* x = device.make(std::vector<float>(static_cast<size_t>(rank) + 2, 1.f));
  void* y = device.make(std::vector<float>(static_cast<size_t>(rank) + 2, 0.f));
  const int64_t n = rank + 2;
  const std::string error = Call(api, cuda_ctx, kAllreduce)
                                .str("name", "uneven")
                                .in(x, {n})
                                .out(y, {n})
                                .run(&xla_ffi_collective_cuda);
  expect(error.find("MismatchError: ") == 0 && error.find("'uneven'") != std::string::npos,
         "mismatch: got '" + error + "'");
  expect(runrun_cuda_stream() == thread_stream, "the stream was not restored after an error");
}

// Registration: each target reports this build's API version and no traits (not command
// buffer compatible: a CUDA graph must never capture a handler that blocks on its peers).
void check_registration(const XLA_FFI_Api* api, XLA_FFI_ExecutionContext* cuda_ctx) {
  for (XLA_FFI_Handler* handler :
       {&xla_ffi_collective_cpu, &xla_ffi_collective_cuda, &xla_ffi_profile_mark}) {
    XLA_FFI_Metadata metadata{};
    metadata.struct_size = XLA_FFI_Metadata_STRUCT_SIZE;
    metadata.traits = ~0u;
    const std::string error = Call(api, cuda_ctx, kAllreduce).run(handler, &metadata);
    expect(error.empty() && metadata.traits == 0 &&
               metadata.api_version.major_version == XLA_FFI_API_MAJOR &&
               metadata.api_version.minor_version == XLA_FFI_API_MINOR,
           "metadata: '" + error + "', traits " + std::to_string(metadata.traits));
  }
}

// runrun --profile's step mark, on both platforms: a step end of its profiler.
void check_profile_mark(const XLA_FFI_Api* api, XLA_FFI_ExecutionContext* host_ctx,
                        XLA_FFI_ExecutionContext* cuda_ctx) {
  runrun::python::profile_take();
  for (XLA_FFI_ExecutionContext* ctx : {host_ctx, cuda_ctx}) {
    const std::string error =
        Call(api, ctx, kAllreduce).i32("profile", 7).run(&xla_ffi_profile_mark);
    expect(error.empty(), "profile mark: " + error);
  }
  const runrun::python::ProfileBatch batch = runrun::python::profile_take();
  expect(batch.records.size() == 2 && batch.records[0].profiler == 7 &&
             batch.records[0].kind == 1 && batch.records[1].profiler == 7,
         "profile mark: " + std::to_string(batch.records.size()) + " records");
}

// An XLA whose FFI API predates the device-ordinal query: what to do, not a crash.
void check_old_api(const XLA_FFI_Api& api, XLA_FFI_ExecutionContext* cuda_ctx) {
  XLA_FFI_Api old = api;
  old.struct_size = offsetof(XLA_FFI_Api, XLA_FFI_DeviceOrdinal_Get);
  float x = 1.f, y = 0.f;
  const std::string error =
      Call(&old, cuda_ctx, kAllreduce).in(&x, {}).out(&y, {}).run(&xla_ffi_collective_cuda);
  expect(error.find("has no device ordinal or stream query") != std::string::npos &&
             error.find("RUNRUN_JAX_JIT_PATH=callback") != std::string::npos,
         "old XLA FFI API: got '" + error + "'");
}

}  // namespace

int main(int argc, char** argv) {
  (void)argc;
  (void)argv;
  XLA_FFI_Api api = fake_api();
  CUstream_st* stream = runrun::testing::new_framework_stream();
  check_before_init(&api, stream);
  runrun_runtime* rt = nullptr;
  if (runrun_init("gloo", &rt) != RUNRUN_OK) {
    std::fprintf(stderr, "runrun_init failed: %s\n", runrun_last_error());
    return 2;
  }
  runrun::python::xla_ffi_attach(rt);
  runrun_topology topo{};
  runrun_get_topology(rt, &topo);
  rank = topo.rank;

  XLA_FFI_ExecutionContext host_ctx{nullptr, 0};
  Memory host(false, nullptr);
  run_every_kind(&xla_ffi_collective_cpu, &api, &host_ctx, host, topo.size, "cpu");

  // The CUDA target on XLA's stream and device (local rank), the thread's own stream kept.
  CUstream_st* thread_stream = runrun::testing::new_framework_stream();
  runrun_set_cuda_stream(thread_stream);
  XLA_FFI_ExecutionContext cuda_ctx{stream, topo.local_rank};
  Memory device(true, stream);
  run_every_kind(&xla_ffi_collective_cuda, &api, &cuda_ctx, device, topo.size, "cuda");
  expect(runrun_cuda_stream() == thread_stream, "the thread's CUDA stream was not restored");

  check_far_device(&api, stream);
  check_failed_op(&api, &cuda_ctx, device, thread_stream);
  // Every output the runtime allocated on the device was freed, after its copy, on the stream.
  cudaStreamSynchronize(stream);
  expect(fake_cuda_async_allocations() >= 4 &&  // allgather, alltoall, reducescatter, short
             fake_cuda_async_allocations() == fake_cuda_async_frees(),
         "device outputs freed: " + std::to_string(fake_cuda_async_allocations()) +
             " cudaMallocAsync, " + std::to_string(fake_cuda_async_frees()) + " freed");

  check_registration(&api, &cuda_ctx);
  check_profile_mark(&api, &host_ctx, &cuda_ctx);
  check_old_api(api, &cuda_ctx);

  runrun_shutdown(rt);
  runrun::python::xla_ffi_detach(rt);
  runrun_destroy(rt);
  if (failures == 0) std::printf("rank %d: every XLA FFI handler check passed\n", rank);
  return failures == 0 ? 0 : 1;
}

// Device awareness of the core (Backend v2): requests and responses carry the tensor's device
// over the wire, the response cache and the coordinator's agreement check include it, the
// fusion planner never mixes devices, DeviceOps on the CPU, and a tensor on a device this
// build cannot move is refused at enqueue.
#include <stdlib.h>

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "core/api/allocated_output.h"
#include "core/api/dlpack_convert.h"
#include "core/execution/fusion_planner.h"
#include "core/negotiation/message.h"
#include "core/negotiation/message_table.h"
#include "ops/cpu/reduce_kernels.h"
#include "ops/device_ops.h"
#include "runrun/c_api.h"
#include "tests/unit/core/rank_threads.h"

using namespace runrun;

namespace {

// Whatever this machine has, this process finds no CUDA runtime: CUDA tensors are refused here
// (tests/unit/gpu covers them with a fake runtime). A variable that does not open is an error,
// not a fallback (docs/gpu.md).
const bool no_cuda_runtime = [] {
  setenv("RUNRUN_CUDART_LIBRARY", "/nonexistent/runrun-test/libcudart.so", 1);
  return true;
}();

constexpr DLDevice kCuda0{kDLCUDA, 0};
constexpr DLDevice kCuda1{kDLCUDA, 1};

Request tensor_request(DLDevice device) {
  Request r;
  r.name = "grad.w";
  r.op = OpType::kAllreduce;
  r.dtype = DataType::kFloat32;
  r.shape = {4};
  r.device = device;
  return r;
}

Response allreduce_response(const char* name, DLDevice device) {
  Response r;
  r.name = name;
  r.op = OpType::kAllreduce;
  r.dtype = DataType::kFloat32;
  r.shape = {4};
  r.device = device;
  return r;
}

}  // namespace

TEST_CASE("requests and responses carry their device over the wire", "[device]") {
  auto requests = decode_requests(encode_requests({tensor_request(kCuda1)}));
  REQUIRE(requests.size() == 1);
  CHECK(same_device(requests[0].device, kCuda1));
  auto responses = decode_responses(encode_responses({allreduce_response("x", kCuda1)}));
  REQUIRE(responses.size() == 1);
  CHECK(same_device(responses[0].device, kCuda1));
  CHECK(same_device(Request{}.device, kCpuDevice));  // the default: host memory
}

TEST_CASE("the response cache tells requests on different devices apart", "[device]") {
  CHECK(!tensor_request(kCpuDevice).negotiates_like(tensor_request(kCuda0)));
  CHECK(!tensor_request(kCuda0).negotiates_like(tensor_request(kCuda1)));
  CHECK(tensor_request(kCuda0).negotiates_like(tensor_request(kCuda0)));
}

TEST_CASE("ranks that enqueue a tensor on different devices get a mismatch naming both",
          "[device]") {
  for (OpType op : {OpType::kAllreduce, OpType::kAllgather, OpType::kBroadcast}) {
    Request on_cpu = tensor_request(kCpuDevice);
    Request on_gpu = tensor_request(kCuda0);
    on_cpu.op = on_gpu.op = op;
    on_cpu.root = on_gpu.root = 0;
    const Response response = build_response("grad.w", std::vector<Request>{on_cpu, on_gpu});
    INFO(op_type_name(op) << ": " << response.error);
    CHECK(response.error_code == ErrorCode::kMismatch);
    CHECK_THAT(response.error, Catch::Contains("device") && Catch::Contains("'grad.w'") &&
                                   Catch::Contains("rank 0: cpu") &&
                                   Catch::Contains("rank 1: cuda"));
  }
  // Each rank drives its own GPU (cuda:<local_rank>): ranks agree on the kind of device.
  const Response own_gpus = build_response(
      "grad.w", std::vector<Request>{tensor_request(kCuda0), tensor_request(kCuda1)});
  CHECK(own_gpus.ok());
  const Response agreed = build_response(
      "grad.w", std::vector<Request>{tensor_request(kCuda1), tensor_request(kCuda1)});
  CHECK(agreed.ok());
  CHECK(same_device(agreed.device, kCuda1));
}

TEST_CASE("the fusion planner never fuses tensors of different devices", "[device]") {
  const std::vector<Response> responses = {
      allreduce_response("a", kCpuDevice), allreduce_response("b", kCuda0),
      allreduce_response("c", kCpuDevice), allreduce_response("d", kCuda0),
      allreduce_response("e", kCuda1)};
  const auto buckets = plan_fusion(responses, 1 << 20);
  REQUIRE(buckets.size() == 3);
  CHECK(buckets[0].members == std::vector<size_t>{0, 2});
  CHECK(buckets[1].members == std::vector<size_t>{1, 3});
  CHECK(buckets[2].members == std::vector<size_t>{4});
}

TEST_CASE("DeviceOps for host memory copy, zero, scale and divide like the cpu kernels",
          "[device]") {
  const DeviceOps& ops = device_ops_for(kCpuDevice);
  CHECK(same_device(ops.device(), kCpuDevice));
  CHECK(&device_ops_for({kDLCUDAHost, 0}) == &ops);  // pinned host memory is host memory
  std::vector<float> src{1, 2, 3, 4};
  std::vector<float> dst(4, -1);
  ops.copy(dst.data(), src.data(), 4 * sizeof(float));
  CHECK(dst == src);
  ops.scale(dst.data(), 4, DataType::kFloat32, 0.5);
  CHECK(dst == std::vector<float>{0.5f, 1, 1.5f, 2});
  ops.divide(dst.data(), 4, DataType::kFloat32, 2);
  CHECK(dst == std::vector<float>{0.25f, 0.5f, 0.75f, 1});
  std::vector<int32_t> ints{7, -7};
  ops.scale(ints.data(), 2, DataType::kInt32, 0.5);
  std::vector<int32_t> expected{7, -7};
  cpu::scale_buffer(expected.data(), 2, DataType::kInt32, 0.5);
  CHECK(ints == expected);
  ops.zero(dst.data(), 4 * sizeof(float));
  CHECK(dst == std::vector<float>(4, 0));
  CHECK_THROWS_AS(ops.scale(dst.data(), 1, DataType::kBool, 2.0), InvalidArgumentError);
}

TEST_CASE("without a CUDA runtime there are no DeviceOps for a GPU: UnsupportedError naming it",
          "[device]") {
  REQUIRE(no_cuda_runtime);
  CHECK_THROWS_AS(device_ops_for(kCuda1), UnsupportedError);
  CHECK_THROWS_WITH(device_ops_for(kCuda1), Catch::Contains("cuda:1"));
}

TEST_CASE("DLPack tensors keep their device; pinned host memory is cpu", "[device]") {
  float value = 1;
  int64_t shape[1] = {1};
  DLTensor tensor{};
  tensor.data = &value;
  tensor.ndim = 1;
  tensor.shape = shape;
  tensor.dtype = {kDLFloat, 32, 1};
  tensor.device = {kDLCUDA, 2};
  CHECK(same_device(view_from_dlpack(&tensor, "test").device, DLDevice{kDLCUDA, 2}));
  tensor.device = {kDLCUDAHost, 0};
  CHECK(same_device(view_from_dlpack(&tensor, "test").device, kCpuDevice));
}

TEST_CASE("a tensor on a GPU is refused at enqueue with UnsupportedError naming the device",
          "[device]") {
  REQUIRE(no_cuda_runtime);
  testing::run_ranks(1, [](int, Runtime& runtime) {
    std::vector<float> values{1, 2};
    TensorView on_gpu = testing::view_of(values);
    on_gpu.device = kCuda0;
    std::string message;
    try {
      runtime.allreduce("on.gpu", on_gpu, on_gpu, AllreduceOptions{});
    } catch (const UnsupportedError& e) {
      message = e.what();
    }
    RANK_CHECK(message.find("cuda:0") != std::string::npos);
    RANK_CHECK(message.find("'on.gpu'") != std::string::npos);
    // It says what the run-time search for the GPU libraries found, or where it looked.
    RANK_CHECK(message.find("\nGPU libraries on this rank: ") != std::string::npos);
    RANK_CHECK(message.find("NCCL") != std::string::npos);
    // Input and output on different devices: refused too.
    TensorView on_cpu = testing::view_of(values);
    bool refused = false;
    try {
      runtime.broadcast("mixed", on_cpu, on_gpu, 0, 0);
    } catch (const Error&) {
      refused = true;
    }
    RANK_CHECK(refused);
    // Nothing was enqueued: the runtime goes on.
    testing::require_ok(*runtime.allreduce("after", on_cpu, on_cpu, AllreduceOptions{}));
  });
}

TEST_CASE(
    "without a CUDA runtime, an output to allocate for a CUDA input and a host wait on a "
    "stream are refused, naming what the library search looked at",
    "[device]") {
  REQUIRE(no_cuda_runtime);
  std::vector<float> values{1, 2};
  TensorView on_gpu = testing::view_of(values);
  on_gpu.device = kCuda0;
  std::string message;
  try {
    allocate_output_like(OpType::kAllreduce, "grad.w", 3, on_gpu);
  } catch (const UnsupportedError& e) {
    message = e.what();
  }
  CHECK(message.find("allreduce of tensor 'grad.w' on rank 3") != std::string::npos);
  CHECK(message.find("cuda:0") != std::string::npos);
  CHECK(message.find("/nonexistent/runrun-test/libcudart.so") != std::string::npos);
  // A host input gets a host output like it.
  OwnedTensor host = allocate_output_like(OpType::kBroadcast, "b", 0, testing::view_of(values));
  CHECK(host.device.device_type == kDLCPU);
  CHECK(host.shape == std::vector<int64_t>{2});
  CHECK(host.storage != nullptr);

  CHECK(runrun_cuda_stream_wait_host(nullptr, 0) == RUNRUN_UNSUPPORTED);
  const std::string wait_error = runrun_last_error();
  CHECK(wait_error.find("cuda:0") != std::string::npos);
  CHECK(wait_error.find("RUNRUN_CUDART_LIBRARY") != std::string::npos);
}

TEST_CASE("runrun_copy_tensor copies host tensors and refuses what it cannot copy, naming it",
          "[device]") {
  REQUIRE(no_cuda_runtime);
  std::vector<float> src_values{9, 1, 2, 3, 4, 5, 6}, dst_values(6, 0.f);
  int64_t shape[] = {2, 3}, other[] = {3, 2}, negative[] = {-2, 3}, strides[] = {1, 2};
  // The source starts one float in: its byte_offset is honoured.
  DLTensor src{src_values.data(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, nullptr, 4};
  DLTensor dst{dst_values.data(), {kDLCUDAHost, 0}, 2, {kDLFloat, 32, 1}, shape, nullptr, 0};
  REQUIRE(runrun_copy_tensor(&src, &dst) == RUNRUN_OK);
  CHECK(dst_values == std::vector<float>{1, 2, 3, 4, 5, 6});

  auto refused = [&](DLTensor to, runrun_status status) {
    CHECK(runrun_copy_tensor(&src, &to) == status);
    return std::string(runrun_last_error());
  };
  DLTensor t = dst;
  t.shape = other;
  CHECK(refused(t, RUNRUN_INVALID_ARGUMENT)
            .find("the source [2, 3] float32 on cpu and the destination [3, 2] float32 on cpu "
                  "must have the same dtype and shape") != std::string::npos);
  t = dst;
  t.dtype = {kDLInt, 32, 1};
  CHECK(refused(t, RUNRUN_INVALID_ARGUMENT).find("[2, 3] int32 on cpu") != std::string::npos);
  t = dst;
  t.shape = negative;
  CHECK(refused(t, RUNRUN_INVALID_ARGUMENT).find("the destination has a negative dimension") !=
        std::string::npos);
  t = dst;
  t.strides = strides;
  CHECK(refused(t, RUNRUN_INVALID_ARGUMENT).find("is not contiguous") != std::string::npos);
  t = dst;
  t.device = {kDLROCM, 0};
  CHECK(refused(t, RUNRUN_INVALID_ARGUMENT)
            .find("the destination is on rocm:0; only host and CUDA memory are supported") !=
        std::string::npos);
  t = dst;
  t.data = nullptr;
  CHECK(refused(t, RUNRUN_INVALID_ARGUMENT).find("has no data pointer") != std::string::npos);
  CHECK(runrun_copy_tensor(&src, nullptr) == RUNRUN_INVALID_ARGUMENT);
  DLTensor on_gpu = dst, on_other_gpu = dst;
  on_gpu.device = {kDLCUDA, 1};
  on_other_gpu.device = {kDLCUDA, 2};
  CHECK(runrun_copy_tensor(&on_gpu, &on_other_gpu) == RUNRUN_INVALID_ARGUMENT);
  CHECK(std::string(runrun_last_error())
            .find("the source is on cuda:1 and the destination on "
                  "cuda:2") != std::string::npos);

  const std::string cuda_error = refused(on_gpu, RUNRUN_UNSUPPORTED);
  CHECK(cuda_error.find("runrun_copy_tensor on cuda:1") != std::string::npos);
  CHECK(cuda_error.find("/nonexistent/runrun-test/libcudart.so") != std::string::npos);
}

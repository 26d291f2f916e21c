#pragma once
// Why: CUDA tensors over a data backend that moves host memory only (MPI, Gloo, local) — issue 11
// point 4, second half. Each op on CUDA tensors is staged through pinned host memory on runrun's
// stream of the device (ops/cuda_streams.h): that stream waits for the producer event
// recorded at enqueue on the framework's stream, copies the inputs to pinned host buffers, the
// executor runs the op on those exactly as on CPU tensors (fusion, prescale, average, postscale
// on the host), then the results are copied back — into the caller's output, or into device
// memory allocated for ops whose output the runtime allocates (allgather, alltoall,
// reducescatter) — a completion event is recorded, and every framework stream of the op is made
// to wait on it (cudaStreamWaitEvent) before the handle completes. The background thread waits
// only for its own copies in (the host collective reads them next), never for a whole device;
// the pinned buffers go back to their pool once the completion event was reached.
// Threading contract: record_producer() on the enqueuing thread; DeviceStaging on the process
// set's background thread, around one bucket of OpExecutor::execute.

#include <memory>
#include <optional>
#include <vector>

#include "core/execution/fusion_planner.h"
#include "core/negotiation/message.h"
#include "core/negotiation/response_list.h"
#include "core/runtime/tensor_queue.h"
#include "ops/cuda_streams.h"

namespace runrun {

// What an entry of a CUDA tensor carries from enqueue to the background thread.
struct DeviceSync {
  int device = 0;
  // The enqueuing thread's framework stream (gpu::framework_stream()): the op's producer, and
  // the consumer that is made to wait for its outputs.
  gpu::cuda_abi::Stream stream = nullptr;
  std::unique_ptr<gpu::CudaEvent> produced;  // recorded on `stream` at enqueue
};

// Stream-ordered device memory for an output the runtime allocates (allgather, alltoall,
// reducescatter) shaped like `like`: allocated on runrun's stream `runrun`, freed by its DLPack
// deleter on the framework stream `consumer` that reads it, after the work enqueued there.
OwnedTensor allocate_on_device(const OwnedTensor& like, int device, gpu::cuda_abi::Stream runrun,
                               gpu::cuda_abi::Stream consumer);

// For a tensor on a CUDA device: records the producer event on the calling thread's framework
// stream. nullptr for host memory.
std::shared_ptr<DeviceSync> record_producer(DLDevice device);

class DeviceStaging {
 public:
  // Stages the members of `bucket` when they are on a CUDA device (each on the device its own
  // tensor is on: ranks agree on "cuda", each drives its own GPU): waits for their producer
  // events, copies
  // their inputs to pinned host memory and points their entries' views there (and, for outputs
  // the runtime allocates, their handles at a private one). Nothing happens for host memory.
  DeviceStaging(const ResponseList& responses, const FusionBucket& bucket,
                std::vector<std::unique_ptr<TensorEntry>>& entries);
  // Puts the entries back as they were if finish() did not run (the op failed).
  ~DeviceStaging();
  DeviceStaging(const DeviceStaging&) = delete;
  DeviceStaging& operator=(const DeviceStaging&) = delete;

  // What the executor runs: `responses`, or, when staged, a copy whose members are on the cpu.
  const ResponseList& responses() const { return staged_ ? *staged_ : responses_; }

  // After the op ran on the host buffers, before the handles complete: copies the results back
  // to the device, records the completion event, makes the framework streams wait on it, and
  // hands the staging buffers to gpu::release_after (they outlive this object).
  void finish();

 private:
  struct Member {
    TensorEntry* entry = nullptr;
    int device = 0;
    TensorView input, output;        // the caller's views, on the device
    std::shared_ptr<Handle> handle;  // the caller's handle, for runtime-allocated outputs
    gpu::PinnedBuffer input_host, output_host;
    std::optional<OwnedTensor> host_output;  // alive until its copy to the device completed
  };
  void restore();
  // Blocks until the work enqueued so far on runrun's stream of every staged device ran.
  void wait_for_copies();

  const ResponseList& responses_;
  std::optional<ResponseList> staged_;  // members copied with their device on the cpu
  std::vector<int> devices_;            // the distinct devices of the members
  std::vector<Member> members_;
  bool finished_ = false;
};

}  // namespace runrun

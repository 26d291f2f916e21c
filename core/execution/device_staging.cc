#include "core/execution/device_staging.h"

#include <algorithm>
#include <utility>

#include "core/runtime/handle.h"

namespace runrun {

OwnedTensor allocate_on_device(const OwnedTensor& like, int device, gpu::cuda_abi::Stream runrun,
                               gpu::cuda_abi::Stream consumer) {
  OwnedTensor out;
  out.dtype = like.dtype;
  out.shape = like.shape;
  out.device = {kDLCUDA, device};
  void* data = gpu::malloc_async(std::max<size_t>(like.num_bytes(), 1), runrun, device);
  AlignedDelete free_on_consumer;
  free_on_consumer.release = [](std::byte* p, void* stream) {
    gpu::free_async(p, static_cast<gpu::cuda_abi::Stream>(stream));
  };
  free_on_consumer.release_context = consumer;
  out.storage = AlignedBytes(static_cast<std::byte*>(data), free_on_consumer);
  return out;
}

std::shared_ptr<DeviceSync> record_producer(DLDevice device) {
  if (device.device_type != kDLCUDA) return nullptr;
  auto sync = std::make_shared<DeviceSync>();
  sync->device = device.device_id;
  sync->stream = gpu::framework_stream();
  gpu::DeviceGuard guard(sync->device);
  sync->produced = std::make_unique<gpu::CudaEvent>(sync->device);
  sync->produced->record(sync->stream);
  return sync;
}

DeviceStaging::DeviceStaging(const ResponseList& responses, const FusionBucket& bucket,
                             std::vector<std::unique_ptr<TensorEntry>>& entries)
    : responses_(responses) {
  if (responses[bucket.members[0]].device.device_type != kDLCUDA) return;
  gpu::release_due();  // earlier ops' staging buffers whose copies back are done
  std::vector<bool> is_member(responses.size(), false);
  for (size_t m : bucket.members) is_member[m] = true;
  staged_.emplace();
  staged_->reserve(responses.size());
  for (size_t i = 0; i < responses.size(); ++i) {
    if (!is_member[i]) {
      staged_->add_borrowed(responses[i]);
      continue;
    }
    Response on_host = responses[i];
    on_host.device = kCpuDevice;
    staged_->add_owned(std::move(on_host));
  }
  try {
    for (size_t m : bucket.members) {
      TensorEntry* entry = entries[m].get();
      if (entry == nullptr) continue;  // a joined rank: the executor contributes host zeros
      Member& member = members_.emplace_back();
      member.entry = entry;
      member.device = entry->input.device.device_id;
      member.input = entry->input;
      member.output = entry->output;
      if (std::find(devices_.begin(), devices_.end(), member.device) == devices_.end()) {
        devices_.push_back(member.device);
      }
      gpu::DeviceGuard guard(member.device);
      const gpu::cuda_abi::Stream stream = gpu::runrun_stream(member.device);
      if (entry->device_sync) entry->device_sync->produced->make_wait(stream);
      const size_t in_bytes = entry->input.num_bytes();
      member.input_host = gpu::PinnedBuffer(in_bytes);
      gpu::copy_async(member.input_host.data(), entry->input.data, in_bytes, stream, member.device);
      entry->input.data = member.input_host.data();
      entry->input.device = kCpuDevice;
      if (entry->output.data == nullptr) {  // the runtime allocates it: catch it on the host
        member.handle = std::exchange(entry->handle, std::make_shared<Handle>());
      } else if (entry->output.data == member.input.data) {  // in place
        entry->output.data = member.input_host.data();
      } else {
        member.output_host = gpu::PinnedBuffer(entry->output.num_bytes());
        entry->output.data = member.output_host.data();
      }
      entry->output.device = kCpuDevice;
    }
    wait_for_copies();  // the host collective reads the pinned buffers next
  } catch (...) {
    restore();
    throw;
  }
}

void DeviceStaging::wait_for_copies() {
  for (int device : devices_) {
    gpu::CudaEvent copied(device);
    copied.record(gpu::runrun_stream(device));
    copied.synchronize();
  }
}

void DeviceStaging::finish() {
  if (!staged_) return;
  std::vector<std::pair<int, gpu::cuda_abi::Stream>> consumers;  // (device, framework stream)
  for (Member& member : members_) {
    TensorEntry& entry = *member.entry;
    gpu::DeviceGuard guard(member.device);
    const gpu::cuda_abi::Stream stream = gpu::runrun_stream(member.device);
    const gpu::cuda_abi::Stream consumer = entry.device_sync ? entry.device_sync->stream : nullptr;
    const std::pair<int, gpu::cuda_abi::Stream> key{member.device, consumer};
    if (std::find(consumers.begin(), consumers.end(), key) == consumers.end()) {
      consumers.push_back(key);
    }
    if (member.handle) {  // an output the runtime allocated on the host: move it to the device
      entry.handle->complete_part();
      std::optional<OwnedTensor> host = entry.handle->take_output(entry.handle_index);
      if (host) {
        OwnedTensor on_device = allocate_on_device(*host, member.device, stream, consumer);
        gpu::copy_async(on_device.storage.get(), host->storage.get(), host->num_bytes(), stream,
                        member.device);
        member.host_output = std::move(host);
        member.handle->set_output(entry.handle_index, std::move(on_device));
      }
      std::vector<int64_t> splits = entry.handle->received_splits();
      if (!splits.empty()) member.handle->set_received_splits(std::move(splits));
    } else {
      gpu::copy_async(member.output.data, entry.output.data, member.output.num_bytes(), stream,
                      member.device);
    }
  }
  // The op's completion on each device; every framework stream of the op waits for it.
  std::vector<std::unique_ptr<gpu::CudaEvent>> done;
  for (int device : devices_) {
    done.push_back(std::make_unique<gpu::CudaEvent>(device));
    done.back()->record(gpu::runrun_stream(device));
    for (const auto& [consumer_device, consumer] : consumers) {
      if (consumer_device == device) done.back()->make_wait(consumer);
    }
  }
  restore();
  // The copies back still read the pinned buffers and host outputs: they are released once
  // the completion events were reached, and the background thread goes on at once.
  std::shared_ptr<void> kept = std::make_shared<std::vector<Member>>(std::move(members_));
  for (auto& event : done) gpu::release_after(std::move(event), kept);
  finished_ = true;
}

void DeviceStaging::restore() {
  for (Member& member : members_) {
    member.entry->input = member.input;
    member.entry->output = member.output;
    if (member.handle) member.entry->handle = member.handle;
  }
}

DeviceStaging::~DeviceStaging() {
  if (!staged_ || finished_) return;
  restore();
  try {  // copies may still read or write the pinned buffers released next
    wait_for_copies();
  } catch (...) {  // the op's error is already on its way; the device's comes with later ops
  }
}

}  // namespace runrun

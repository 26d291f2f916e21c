#include "ops/gloo/gloo_mesh.h"

#include <exception>
#include <utility>

#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/types.h>

#include "common/errors.h"

namespace runrun::gloo_backend {
namespace {

// Slot prefix of runrun's transfers (gloo's own algorithms, unused here, take small prefixes).
constexpr uint8_t kSlotPrefix = 0x72;

}  // namespace

std::shared_ptr<::gloo::transport::Device> make_tcp_device(const std::string& hostname,
                                                           const std::string& interface) {
  ::gloo::transport::tcp::attr attr;
  attr.hostname = hostname;
  attr.iface = interface;
  try {
    return ::gloo::transport::tcp::CreateDevice(attr);
  } catch (const std::exception& e) {
    throw InvalidArgumentError(
        RUNRUN_WHERE, "creating the gloo tcp device (interface '" + interface + "', hostname '" +
                          hostname + "') failed: " + e.what() +
                          "; name a network interface or an address of this host");
  }
}

Mesh::Mesh(::gloo::rendezvous::Store& store, const std::string& prefix, int rank, int size,
           const std::shared_ptr<::gloo::transport::Device>& device,
           std::chrono::milliseconds connect_timeout) {
  auto context = std::make_shared<::gloo::rendezvous::Context>(rank, size);
  context->setTimeout(connect_timeout);
  try {
    ::gloo::rendezvous::PrefixStore scoped(prefix, store);
    auto device_copy = device;
    context->connectFullMesh(scoped, device_copy);
  } catch (const std::exception& e) {
    const std::string text = e.what();
    const std::string what = "connecting the gloo backend on rank " + std::to_string(rank) +
                             " (store prefix '" + prefix + "') ";
    const std::string hint = "; every rank of the group must connect within " +
                             std::to_string(connect_timeout.count()) +
                             " ms with the same store prefix: check the other ranks' output";
    if (text.find("imeout") != std::string::npos || text.find("imed out") != std::string::npos) {
      throw TimeoutError(RUNRUN_WHERE, what + "timed out: " + text + hint);
    }
    throw PeerFailureError(RUNRUN_WHERE, what + "failed: " + text + hint);
  }
  context_ = std::move(context);
}

uint64_t Mesh::next_slot() { return ::gloo::Slot::build(kSlotPrefix, next_tag_++); }

void Mesh::close() { context_->closeConnections(); }

}  // namespace runrun::gloo_backend

#include "ops/gloo/gloo_mesh.h"

#include <signal.h>

#include <exception>
#include <mutex>
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

// gloo's tcp pairs write to their sockets without MSG_NOSIGNAL: a write to a peer that just
// closed raises SIGPIPE, whose default action kills the whole process instead of letting the
// backend report the lost peer. Python ignores SIGPIPE already; a C or C++ program may not, so
// the first gloo device makes it ignored, unless the program installed a handler of its own.
void ignore_sigpipe_unless_handled() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction current {};
    if (sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL &&
        (current.sa_flags & SA_SIGINFO) == 0) {
      signal(SIGPIPE, SIG_IGN);
    }
  });
}

}  // namespace

std::shared_ptr<::gloo::transport::Device> make_tcp_device(const std::string& hostname,
                                                           const std::string& interface) {
  ignore_sigpipe_unless_handled();
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

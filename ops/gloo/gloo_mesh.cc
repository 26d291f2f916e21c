#include "ops/gloo/gloo_mesh.h"

#include <signal.h>

#include <exception>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/context.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/types.h>

#include "common/errors.h"

namespace runrun::gloo_backend {
namespace {

// Slot prefixes of runrun's transfers (gloo's own algorithms, unused here, take small
// prefixes): one per sequence, so the two never meet.
constexpr uint8_t kSlotPrefix = 0x72;
constexpr uint8_t kPrepostedSlotPrefix = 0x73;

// gloo's tcp pairs write to their sockets without MSG_NOSIGNAL: a write to a peer that just
// closed raises SIGPIPE, whose default action kills the whole process instead of letting the
// backend report the lost peer. Python ignores SIGPIPE already; a C or C++ program may not, so
// the first gloo device makes it ignored, unless the program installed a handler of its own.
void ignore_sigpipe_unless_handled() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction current{};
    if (sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL &&
        (current.sa_flags & SA_SIGINFO) == 0) {
      signal(SIGPIPE, SIG_IGN);
    }
  });
}

// A gloo context whose pairs runrun connects itself. gloo 0.5's rendezvous::Context::
// connectFullMesh stores each rank's N-1 pair addresses as one value and has every rank read
// every other rank's whole value for the one address meant for it: 136*(N-1)^2 bytes per rank
// through the store (docs/scaling.md, "Connections and start-up"). Here each pair has a key of
// its own, "pair/<from>/<to>" holding one address: 136*(N-1) bytes per rank. gloo::Context keeps
// its device and transport context protected for exactly such subclasses (as
// gloo::rendezvous::Context is one).
class PairwiseContext final : public ::gloo::Context {
 public:
  PairwiseContext(int this_rank, int group_size,
                  const std::shared_ptr<::gloo::transport::Device>& device,
                  std::chrono::milliseconds timeout)
      : ::gloo::Context(this_rank, group_size) {
    setTimeout(timeout);
    device_ = device;
    transportContext_ = device->createContext(this_rank, group_size);
    transportContext_->setTimeout(timeout);
  }

  // Every rank creates a pair for every other rank and publishes its address, then waits for
  // the addresses meant for it (one wait for all) and connects each pair in rank order, as
  // connectFullMesh does (gloo lets the side with the lower address listen; a connect completes
  // in the device's thread, so the ranks connecting one after another cannot wait in a cycle).
  void connect_full_mesh(::gloo::rendezvous::Store& store) {
    std::vector<std::string> theirs;
    for (int peer = 0; peer < size; ++peer) {
      if (peer == rank) continue;
      auto& pair = transportContext_->createPair(peer);
      store.set(pair_key(rank, peer), pair->address().bytes());
      theirs.push_back(pair_key(peer, rank));
    }
    if (theirs.empty()) return;  // a group of one
    store.wait(theirs, getTimeout());
    for (int peer = 0, i = 0; peer < size; ++peer) {
      if (peer == rank) continue;
      transportContext_->getPair(peer)->connect(store.get(theirs[static_cast<size_t>(i++)]));
    }
  }

 private:
  static std::string pair_key(int from, int to) {
    return "pair/" + std::to_string(from) + "/" + std::to_string(to);
  }
};

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
  std::shared_ptr<PairwiseContext> context;
  try {
    context = std::make_shared<PairwiseContext>(rank, size, device, connect_timeout);
    ::gloo::rendezvous::PrefixStore scoped(prefix, store);
    context->connect_full_mesh(scoped);
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

uint64_t Mesh::next_preposted_slot() {
  return ::gloo::Slot::build(kPrepostedSlotPrefix, next_preposted_tag_++);
}

void Mesh::close() { context_->closeConnections(); }

}  // namespace runrun::gloo_backend

#pragma once
// Why: one fully connected gloo context (every rank paired with every other over TCP), found
// through a rendezvous store prefix: one key per pair, so a rank reads N-1 addresses from the
// store, not gloo's connectFullMesh's N-1 lists of N-1 (docs/scaling.md). The backend moves bytes
// over it with gloo's public point-to-point API (unbound buffers), never with gloo's algorithm
// library: that is what lets abort() wake a blocked wait (UnboundBuffer::abortWait*), which gloo's
// algorithms cannot do from outside in gloo 0.5.
// Threading contract: context(), next_slot() and next_preposted_slot() on the owning backend's
// driving thread; close() from any thread while the mesh is alive.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <gloo/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/device.h>

namespace runrun::gloo_backend {

// A tcp device bound to `interface` (a network interface name) when given, else to the address
// `hostname` resolves to, else to the address this host's name resolves to (gloo's default).
std::shared_ptr<::gloo::transport::Device> make_tcp_device(const std::string& hostname,
                                                           const std::string& interface);

class Mesh {
 public:
  // Collective over the `size` ranks that pass the same `prefix` of `store`: connects to every
  // other rank, waiting at most `connect_timeout` for them. Throws TimeoutError or
  // PeerFailureError naming the rank and prefix when that fails.
  Mesh(::gloo::rendezvous::Store& store, const std::string& prefix, int rank, int size,
       const std::shared_ptr<::gloo::transport::Device>& device,
       std::chrono::milliseconds connect_timeout);

  const std::shared_ptr<::gloo::Context>& context() const { return context_; }
  int rank() const { return context_->rank; }
  int size() const { return context_->size; }

  // A fresh slot for one exchange; every rank draws the same sequence.
  uint64_t next_slot();
  // A fresh slot of a second sequence, apart from next_slot()'s: for transfers whose receives
  // are posted ahead of the exchanges drawn in between (gloo_preposted_rounds.h).
  uint64_t next_preposted_slot();

  // Closes every connection: peers see them closed, later transfers fail. Idempotent.
  // gloo's hard close (a reset: bytes not yet sent are dropped), for abort and failure only.
  // A clean shutdown never calls it: destruction closes softly (the bytes written go out
  // before the end of the stream), and after the shutdown round no transfer of a peer is left
  // to need this rank (gloo writes an unbound send only once the receiver posted it, and this
  // rank left the round only after every peer's bytes for it arrived).
  void close();

 private:
  std::shared_ptr<::gloo::Context> context_;
  uint32_t next_tag_ = 0;
  uint32_t next_preposted_tag_ = 0;
};

}  // namespace runrun::gloo_backend

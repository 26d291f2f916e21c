#pragma once
// Why: runrun's size- and scale-aware collective algorithms (recursive doubling,
// halving-doubling) are written once against this point-to-point interface, so the Gloo
// backend runs them over its connections and unit tests run them over an in-process transport
// with up to thousands of ranks as threads, counting the messages, bytes and steps each rank
// takes against the cost model (docs/scaling.md, issue 40).
// Threading contract: each rank drives its own transport from one thread.

#include <cstddef>
#include <vector>

namespace runrun::algorithms {

// `bytes` at `data` to or from rank `peer` (never this rank).
struct StepTransfer {
  int peer;
  void* data;
  size_t bytes;
};

class StepTransport {
 public:
  virtual ~StepTransport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // One step of a collective: posts every send and receive, then waits for all of them. Every
  // rank of the collective calls it the same number of times (a rank with nothing to move in a
  // step passes empty lists, so that transports numbering their messages by step stay aligned);
  // each send matches the peer's receive of the same step and size, at most one per peer and
  // direction. Transfers of 0 bytes are skipped on both sides. Throws what the transport
  // throws (a lost peer, a deadline).
  virtual void step(const std::vector<StepTransfer>& sends,
                    const std::vector<StepTransfer>& receives) = 0;
};

}  // namespace runrun::algorithms

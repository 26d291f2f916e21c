#pragma once
// Why: members of a shared-memory group must learn the segment's name from its creator and
// tell each other whether they mapped it, before any of them can use it. The job already has a
// key-value store every rank reaches (the gloo backend's rendezvous store); this is the little
// of it ops/shm needs, so ops/shm depends on no transport.
// Thread-safety: as the implementation's store (the gloo adapter: any thread, calls serialised).

#include <chrono>
#include <string>

namespace runrun::shm {

class Board {
 public:
  virtual ~Board() = default;
  virtual void set(const std::string& key, const std::string& value) = 0;
  // Waits for `key` up to `timeout`; throws (any runrun error, or the store's) when it does not
  // appear in time.
  virtual std::string get(const std::string& key, std::chrono::milliseconds timeout) = 0;
};

}  // namespace runrun::shm

#pragma once
// Why: one rank's handle on a LocalWorld, shared by the local backend and its control channel:
// it carries the rank, the abort flag and the error that broke the rank's communication, and
// turns "contribute these bytes" into a world exchange with those checks applied.
// Threading contract: exchange() is called by the one thread driving the backend; abort() by
// any thread.

#include <atomic>
#include <exception>
#include <memory>
#include <string>

#include "ops/local/local_world.h"

namespace runrun {

class LocalEndpoint {
 public:
  LocalEndpoint(std::shared_ptr<LocalWorld> world, int rank);

  int rank() const { return rank_; }
  const std::shared_ptr<LocalWorld>& world() const { return world_; }

  // Copies `bytes` bytes at `data` into a blob (so in-place callers may overwrite their buffer).
  static LocalWorld::Blob stage(const void* data, size_t bytes);

  // World exchange on `channel`. After a peer failure, timeout or internal error every later
  // call rethrows that first error: the group is broken for this rank.
  LocalWorld::ExchangeResult exchange(LocalChannel channel, LocalWorld::Blob contribution,
                                      const std::string& signature, const char* op);

  // Makes blocked and later exchanges throw ShutDownError and tells peers this rank is gone.
  void abort();

 private:
  std::shared_ptr<LocalWorld> world_;
  int rank_;
  std::atomic<bool> aborted_{false};
  std::exception_ptr broken_;
};

}  // namespace runrun

#pragma once
// Why: a rank of an elastic job (runrun --gloo --min-np ...) does not know its rank and size
// when it starts: the launcher's elastic driver assigns them per generation (elastic_keys.h).
// This is the rank's side of that conversation, one per process because a process lives through
// several generations (hvd.shutdown() + hvd.init() between them): join the next generation,
// tell whether a newer one was published (the hosts changed), report that this rank failed in
// its generation so the driver starts another.
// Enabled when the launcher set RUNRUN_ELASTIC_WORKER (this process's worker id).
// Thread-safety: every method may be called from any thread (one mutex); join blocks.

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "rendezvous/client.h"
#include "rendezvous/elastic_keys.h"

namespace runrun::rendezvous {

class ElasticWorker {
 public:
  // The process's worker, or null when this process is not a worker of an elastic job.
  static ElasticWorker* of_this_process();

  // Waits (within the elastic timeout, RUNRUN_ELASTIC_TIMEOUT) for a generation newer than the
  // last one this process joined, and returns this worker's assignment in it; also sets
  // RUNRUN_RANK/RUNRUN_SIZE/RUNRUN_HOST_INDEX for the script. Throws TimeoutError when none
  // comes, InvalidArgumentError when the newest generation has no place for this worker (the
  // driver is stopping it), and the client's errors.
  ElasticAssignment join();
  // The generation this process joined last (0: none yet).
  uint64_t joined() const;
  // The newest generation the driver published (reads the store).
  uint64_t latest();
  // Tells the driver that this rank failed in the generation it joined (a collective failed):
  // the driver starts a new generation with the workers still alive.
  void report_failure();

  const std::string& worker_id() const { return worker_; }

 private:
  ElasticWorker(std::string worker, std::chrono::milliseconds timeout);
  RendezvousClient& client();  // connects (again) when needed; mutex_ held

  std::string worker_;
  std::chrono::milliseconds timeout_;
  mutable std::mutex mutex_;
  std::unique_ptr<RendezvousClient> client_;
  uint64_t joined_ = 0;
};

}  // namespace runrun::rendezvous

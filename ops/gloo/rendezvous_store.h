#pragma once
// Why: Gloo connects its full mesh through a gloo::rendezvous::Store; this one is the job's
// authenticated rendezvous server (rendezvous/client.h), so a Gloo job needs no shared file
// system and no unauthenticated store. Keys are those of one generation (elastic training gives
// each membership its own). Gloo's `get` waits for the key, as its FileStore and TCPStore do.
// Thread-safety: as RendezvousClient: any thread, calls serialised.

#include <gloo/rendezvous/store.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rendezvous/client.h"

namespace runrun::ops {

class RendezvousStore : public gloo::rendezvous::Store {
 public:
  // `get_timeout` bounds get()'s wait for a key and the timeout-less wait().
  RendezvousStore(std::shared_ptr<rendezvous::RendezvousClient> client, uint64_t generation,
                  std::chrono::milliseconds get_timeout = Store::kDefaultTimeout);
  // `server` is kept alive as long as this store: rank 0 of a direct launch (srun, torchrun)
  // serves the job's rendezvous itself, for as long as its backend may ask the store.
  RendezvousStore(std::shared_ptr<rendezvous::RendezvousClient> client, uint64_t generation,
                  std::chrono::milliseconds get_timeout, std::shared_ptr<void> server);

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;

  // What this store asked the rendezvous server so far, for start-up measurements
  // (tests/perf/scale/startup_bench.sh reads it from the gloo backend's debug log). A get is a
  // wait and a get on the wire: both are counted. Any thread.
  struct Traffic {
    uint64_t requests = 0;    // round trips to the server
    uint64_t bytes_read = 0;  // values fetched by get
  };
  Traffic traffic() const;

 private:
  std::shared_ptr<void> server_;  // declared first: destroyed after the client
  std::shared_ptr<rendezvous::RendezvousClient> client_;
  uint64_t generation_;
  std::chrono::milliseconds get_timeout_;
  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> bytes_read_{0};
};

// "N store requests, B bytes read" when `store` is a RendezvousStore, else empty.
std::string traffic_summary(const gloo::rendezvous::Store& store);

}  // namespace runrun::ops

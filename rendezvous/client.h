#pragma once
// Why: how a rank talks to the job's rendezvous server (server.h): connect with retries within
// a bounded total time (the server may start after the rank), prove the job secret, then
// set/get/wait/add/check/delete keys of a generation. Every call is bounded: connecting by
// `connect_timeout`, a wait by its own timeout, every other request by `request_timeout`.
// Failures throw runrun errors naming the server's address, the rank and what to do.
// Thread-safety: every method may be called from any thread; calls are serialised on one
// connection. After a failed call (lost connection, timeout) the client is unusable and every
// later call throws.

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "rendezvous/job_secret.h"
#include "rendezvous/protocol.h"

namespace runrun::rendezvous {

struct ClientOptions {
  std::string host;
  uint16_t port = 0;
  JobSecret secret;  // empty: the server will refuse this client
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(30)};
  std::chrono::milliseconds request_timeout{std::chrono::seconds(30)};
  size_t max_frame_bytes = kDefaultMaxFrameBytes;
  std::string who = "this process";  // "rank 3", for messages
};

class RendezvousClient {
 public:
  // Connects and authenticates. Throws TimeoutError when the server cannot be reached within
  // connect_timeout, InvalidArgumentError when it refuses this client's secret (no retry: the
  // secret will not change), PeerFailureError when the address is not a runrun rendezvous server.
  explicit RendezvousClient(ClientOptions options);
  ~RendezvousClient();
  RendezvousClient(const RendezvousClient&) = delete;
  RendezvousClient& operator=(const RendezvousClient&) = delete;

  void set(uint64_t generation, const std::string& key, const std::string& value);
  // The value, or nullopt when the key does not exist (never waits).
  std::optional<std::string> get(uint64_t generation, const std::string& key);
  // Returns once every key exists; throws TimeoutError naming the missing keys after `timeout`.
  void wait(uint64_t generation, const std::vector<std::string>& keys,
            std::chrono::milliseconds timeout);
  // Atomically adds `delta` to a counter (absent: 0) and returns the new value.
  int64_t add(uint64_t generation, const std::string& key, int64_t delta);
  // True when every key exists.
  bool check(uint64_t generation, const std::vector<std::string>& keys);
  // True when the key existed.
  bool remove(uint64_t generation, const std::string& key);
  // Frees every generation below `generation` (elastic: after moving to a new membership).
  void drop_generations_before(uint64_t generation);

  const ClientOptions& options() const { return options_; }
  std::string server_address() const;

 private:
  void connect_with_retries();
  void authenticate(int fd, std::chrono::steady_clock::time_point deadline);
  // Sends one request and returns the answer of type `expected` (or kNotFound); throws for
  // errors, refusals, timeouts and lost connections. Called with mutex_ held.
  std::string round_trip(const std::string& request, const char* op, MessageType expected,
                         std::chrono::milliseconds extra_time = {});

  ClientOptions options_;
  std::mutex mutex_;
  int fd_ = -1;
  std::string broken_;  // why the connection is unusable; empty while it is fine
};

}  // namespace runrun::rendezvous

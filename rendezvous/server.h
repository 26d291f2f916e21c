#pragma once
// Why: the job's rendezvous server, a key-value store over TCP that the launcher runs for its
// ranks (the Gloo backend connects its full mesh through it; elastic training will keep its
// membership in it, one generation of keys per membership). Every connection must prove the job
// secret before its first request (protocol.h); a connection that does not is refused and never
// touches the store.
//
// One thread serves every client with poll(): many clients, waits parked until their keys exist
// or their deadline passes, bounded memory per request and for the whole store.
// Thread-safety: construct, query and stop from one thread (the launcher's); the server's own
// thread owns the store and the connections.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "common/logging.h"
#include "rendezvous/job_secret.h"
#include "rendezvous/protocol.h"

namespace runrun::rendezvous {

struct ServerOptions {
  // The address ranks reach the launcher at; port 0 binds an ephemeral port.
  std::string bind_address = "127.0.0.1";
  uint16_t port = 0;
  size_t max_frame_bytes = kDefaultMaxFrameBytes;
  size_t max_store_bytes = kDefaultMaxStoreBytes;
  std::chrono::milliseconds auth_timeout = kDefaultAuthTimeout;
  // Where refusals are reported (never the secret); null: nowhere.
  Logger logger;
};

class RendezvousServer {
 public:
  // Binds and listens, then starts serving. Throws InvalidArgumentError naming the address when
  // it cannot be bound.
  RendezvousServer(JobSecret secret, ServerOptions options);
  ~RendezvousServer();  // stop()
  RendezvousServer(const RendezvousServer&) = delete;
  RendezvousServer& operator=(const RendezvousServer&) = delete;

  const std::string& address() const { return options_.bind_address; }
  uint16_t port() const { return port_; }
  // Connections refused so far (wrong or missing secret, protocol errors, auth timeouts).
  size_t refused_connections() const { return refused_.load(); }

  // Stops the thread and closes every connection; waiting clients see the connection close.
  // Idempotent.
  void stop();

 private:
  class Loop;

  JobSecret secret_;
  ServerOptions options_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;  // eventfd that stop() writes to
  uint16_t port_ = 0;
  std::atomic<size_t> refused_{0};
  std::unique_ptr<Loop> loop_;
  std::thread thread_;
};

}  // namespace runrun::rendezvous

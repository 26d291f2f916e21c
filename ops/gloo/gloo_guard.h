#pragma once
// Why: the gloo backend's counterpart of MpiWaiter: every transfer of a backend is waited for
// here, which turns gloo's outcomes into runrun's error model and keeps the backend's state:
// - abort() (any thread) closes the meshes' connections (peers see this rank leave) and wakes
//   every registered wait; the blocked call and every later one throw ShutDownError;
// - a wait that passes the operation's deadline (RUNRUN_COLLECTIVE_TIMEOUT) throws
//   TimeoutError naming the op and the bound (gloo closes the connections);
// - any other failure of a transfer throws PeerFailureError naming the peer of that transfer.
// After a timeout or peer failure the backend is broken (its connections are closed, so peers
// learn at once): every later call throws that again.
// Threading contract: everything but abort() on the backend's one driving thread.

#include <chrono>
#include <exception>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <gloo/transport/unbound_buffer.h>

#include "common/errors.h"
#include "ops/gloo/gloo_mesh.h"

namespace runrun::gloo_backend {

class Guard {
 public:
  using Clock = std::chrono::steady_clock;

  // `timeout` 0 means no limit.
  Guard(int rank, std::chrono::milliseconds timeout);

  // Meshes abort() closes. Called while constructing the backend (before any abort()).
  void watch(Mesh* mesh) { meshes_.push_back(mesh); }

  // Throws ShutDownError after abort(), or the error that broke the backend, naming `op`.
  void check_usable(const char* op) const;

  // The deadline of an operation starting now.
  Clock::time_point deadline() const;

  // Waits for `buffer`'s posted receive (or send) from/to `peer`, until `deadline`.
  void wait_recv(const char* op, ::gloo::transport::UnboundBuffer& buffer, int peer,
                 Clock::time_point deadline);
  void wait_send(const char* op, ::gloo::transport::UnboundBuffer& buffer, int peer,
                 Clock::time_point deadline);

  // Translates an exception thrown while posting or waiting for a transfer with `peer`.
  [[noreturn]] void fail(const char* op, int peer, const std::exception& error);

  void abort();

 private:
  template <typename WaitFn>
  void wait(const char* op, ::gloo::transport::UnboundBuffer& buffer, int peer, WaitFn&& fn);

  int rank_;
  std::chrono::milliseconds timeout_;
  std::vector<Mesh*> meshes_;
  mutable std::mutex mutex_;  // guards aborted_ and waiting_
  bool aborted_ = false;
  std::set<::gloo::transport::UnboundBuffer*> waiting_;
  ErrorCode broken_code_ = ErrorCode::kOk;  // set by a failure; later calls throw it again
  std::string broken_;
};

}  // namespace runrun::gloo_backend

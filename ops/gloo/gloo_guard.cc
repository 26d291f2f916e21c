#include "ops/gloo/gloo_guard.h"

#include <algorithm>

#include <gloo/common/error.h>

namespace runrun::gloo_backend {
namespace {

// "No limit" for gloo, whose waits need a finite bound: far beyond any training step.
constexpr std::chrono::milliseconds kNoLimit = std::chrono::hours(24 * 365);

}  // namespace

Guard::Guard(int rank, std::chrono::milliseconds timeout) : rank_(rank), timeout_(timeout) {}

void Guard::check_usable(const char* op) const {
  const std::string prefix = std::string(op) + " on rank " + std::to_string(rank_) + ": ";
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (aborted_) {
      throw ShutDownError(RUNRUN_WHERE, prefix +
                                            "the gloo backend was aborted (the runtime is "
                                            "shutting down or lost a peer)");
    }
  }
  if (broken_code_ != ErrorCode::kOk) {
    throw_error(broken_code_, RUNRUN_WHERE,
                prefix + "the gloo backend is unusable after an earlier failure: " + broken_);
  }
}

Guard::Clock::time_point Guard::deadline() const {
  return Clock::now() + (timeout_.count() > 0 ? timeout_ : kNoLimit);
}

template <typename WaitFn>
void Guard::wait(const char* op, ::gloo::transport::UnboundBuffer& buffer, int peer, WaitFn&& fn) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!aborted_) waiting_.insert(&buffer);
  }
  bool completed = false;
  try {
    completed = fn();
  } catch (const std::exception& e) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      waiting_.erase(&buffer);
    }
    fail(op, peer, e);
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    waiting_.erase(&buffer);
  }
  check_usable(op);  // aborted: ShutDownError
  if (!completed) {
    throw InternalError(RUNRUN_WHERE, std::string(op) + " on rank " + std::to_string(rank_) +
                                          ": a gloo wait was interrupted without an abort; "
                                          "please report this as a runrun bug");
  }
}

void Guard::wait_recv(const char* op, ::gloo::transport::UnboundBuffer& buffer, int peer,
                      Clock::time_point deadline) {
  wait(op, buffer, peer, [&] {
    check_usable(op);  // an abort before the wait was registered
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    return buffer.waitRecv(nullptr, std::max(left, std::chrono::milliseconds(0)));
  });
}

void Guard::wait_send(const char* op, ::gloo::transport::UnboundBuffer& buffer, int peer,
                      Clock::time_point deadline) {
  wait(op, buffer, peer, [&] {
    check_usable(op);
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    return buffer.waitSend(nullptr, std::max(left, std::chrono::milliseconds(0)));
  });
}

void Guard::abort() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (aborted_) return;
  aborted_ = true;
  // Close first: once closed, gloo's device thread writes into no buffer of ours any more.
  for (Mesh* mesh : meshes_) mesh->close();
  for (auto* buffer : waiting_) {
    buffer->abortWaitRecv();
    buffer->abortWaitSend();
  }
}

void Guard::fail(const char* op, int peer, const std::exception& error) {
  if (const auto* runrun_error = dynamic_cast<const Error*>(&error)) {
    throw_error(runrun_error->code(), RUNRUN_WHERE, runrun_error->what());
  }
  check_usable(op);  // aborted: ShutDownError, whatever gloo reported
  const std::string prefix = std::string(op) + " on rank " + std::to_string(rank_) + ": ";
  const std::string text = error.what();
  // The backend is broken: close every connection, so gloo writes into no buffer of ours any
  // more and the peers learn at once instead of at their own timeout.
  for (Mesh* mesh : meshes_) mesh->close();
  if (text.find("Timed out") != std::string::npos || text.find("timeout") != std::string::npos) {
    broken_code_ = ErrorCode::kTimeout;
    broken_ = std::string(op) + " timed out after " + std::to_string(timeout_.count()) +
              " ms (gloo: " + text + ")";
    throw TimeoutError(RUNRUN_WHERE, prefix + "timed out after " +
                                         std::to_string(timeout_.count()) +
                                         " ms (RUNRUN_COLLECTIVE_TIMEOUT) waiting for rank " +
                                         std::to_string(peer) +
                                         ": it did not take part or is stuck; check its output "
                                         "(gloo: " +
                                         text + ")");
  }
  broken_code_ = ErrorCode::kPeerFailure;
  broken_ = "lost rank " + std::to_string(peer) + " (gloo: " + text + ")";
  throw PeerFailureError(RUNRUN_WHERE, prefix + "lost rank " + std::to_string(peer) +
                                           ": its connection failed (gloo: " + text +
                                           "); the peer died, was aborted, or gave up after its "
                                           "own collective timeout: check its output");
}

}  // namespace runrun::gloo_backend

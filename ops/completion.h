#pragma once
// Why: a collective returns at once with a Completion instead of blocking, so a caller can
// overlap work with communication and so every transport fits one contract: MPI completes it
// from its posted requests, a GPU backend (NCCL) will complete it from a CUDA event recorded on
// its stream, and transports that run an operation to the end on the calling thread (gloo,
// local) hand back one that is already complete (or already failed). The blocking calls of
// Backend are start + wait on this.
//
// Semantics: an operation ends once, successfully or with an error. poll() never blocks (it
// may drive progress, e.g. MPI_Test); wait_for() blocks at most about `timeout`; wait() blocks
// until the end. Once the operation failed, every call throws its error (the same exception
// type and text each time: PeerFailureError, TimeoutError for the collective timeout,
// ShutDownError after abort, ...). A wait_for() that runs out of time is not an error: it
// returns false and the operation goes on. The collective timeout (RUNRUN_COLLECTIVE_TIMEOUT)
// is the backend's and is counted from the start of the operation, however it is waited for.
//
// Threading contract: a completion is polled/waited by one thread at a time, normally the
// thread driving its backend (it may progress the backend's transport); Backend::abort() from
// any thread makes a pending completion fail with ShutDownError. The backend must outlive its
// completions, and the buffers of an operation must stay valid until it ended. Destroying a
// completion whose operation has not ended abandons it: the transport cannot take back bytes
// in flight, so the backend becomes unusable (every later call throws) — wait first.

#include <chrono>
#include <exception>
#include <memory>

namespace runrun {

class Completion {
 public:
  virtual ~Completion() = default;

  // True once the operation ended successfully, false while it runs; throws its error.
  virtual bool poll() = 0;

  // Blocks until the operation ended (true) or about `timeout` passed (false); throws its
  // error. Must not spin a core for long: waiting backs off or blocks.
  virtual bool wait_for(std::chrono::milliseconds timeout) = 0;

  // Blocks until the operation ended; throws its error.
  void wait();
};

// A completion for an operation that already ended: successfully (no error) or with `error`.
// What transports that run an operation on the calling thread return.
class ReadyCompletion final : public Completion {
 public:
  ReadyCompletion() = default;
  explicit ReadyCompletion(std::exception_ptr error) : error_(std::move(error)) {}

  bool poll() override;
  bool wait_for(std::chrono::milliseconds) override { return poll(); }

 private:
  std::exception_ptr error_;
};

// Runs `body` (the whole operation) now and returns a completion that is ready with its
// outcome. Errors thrown by `body` are not thrown here: they surface from the completion, as
// they would for an asynchronous transport.
template <typename Body>
std::unique_ptr<Completion> run_to_completion(Body&& body) {
  try {
    body();
  } catch (...) {
    return std::make_unique<ReadyCompletion>(std::current_exception());
  }
  return std::make_unique<ReadyCompletion>();
}

}  // namespace runrun

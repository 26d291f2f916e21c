#include "ops/completion.h"

namespace runrun {

void Completion::wait() {
  // Long slices: an implementation's wait_for blocks or backs off, so the slice length only
  // bounds how often this loop turns.
  while (!wait_for(std::chrono::hours(1))) {}
}

bool ReadyCompletion::poll() {
  if (error_) std::rethrow_exception(error_);
  return true;
}

}  // namespace runrun

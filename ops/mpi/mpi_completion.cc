#include "ops/mpi/mpi_completion.h"

#include <utility>

namespace runrun::mpi {

MpiCompletion::MpiCompletion(std::shared_ptr<MpiWaiter> waiter, const char* op)
    : waiter_(std::move(waiter)), op_(op), posted_(MpiWaiter::Clock::now()) {
  requests_.reserve(4);
}

MpiCompletion::~MpiCompletion() {
  if (done_ || error_) return;
  // Only posted requests are in flight: a completion dropped because a check failed before
  // (or while) posting leaves nothing behind.
  for (MPI_Request request : requests_) {
    if (request != MPI_REQUEST_NULL) {
      waiter_->abandon(op_);
      return;
    }
  }
}

MPI_Request* MpiCompletion::next_request() {
  // Slots are handed out while posting, before anyone waits; MPI keeps no pointer to them
  // after the call, so the vector may grow.
  requests_.push_back(MPI_REQUEST_NULL);
  return &requests_.back();
}

std::vector<char>& MpiCompletion::keep(std::vector<char> bytes) {
  staged_.push_back(std::make_unique<std::vector<char>>(std::move(bytes)));
  return *staged_.back();
}

template <typename Step>
bool MpiCompletion::run(Step&& step) {
  if (error_) std::rethrow_exception(error_);
  if (done_) return true;
  try {
    done_ = step();
  } catch (...) {
    error_ = std::current_exception();
    throw;
  }
  if (done_) staged_.clear();
  return done_;
}

bool MpiCompletion::poll() {
  return run([&] { return waiter_->test(requests_, op_, posted_); });
}

bool MpiCompletion::wait_for(std::chrono::milliseconds timeout) {
  const auto now = MpiWaiter::Clock::now();
  const auto until =
      timeout >= std::chrono::hours(24 * 365) ? MpiWaiter::Clock::time_point::max() : now + timeout;
  return run([&] { return waiter_->wait_until(requests_, op_, posted_, until); });
}

}  // namespace runrun::mpi

#pragma once
// Why: the mpi backend's Completion: the MPI requests a collective posted (several when a large
// collective is split into calls of at most INT_MAX elements) and the staging buffers they
// read from, completed through the backend's MpiWaiter (polite back-off, abort, collective
// timeout counted from posting). Destroying it unfinished abandons the requests (MPI cannot
// cancel a collective) and marks the backend unusable.
// Threading contract: as Completion: the backend's driving thread; the backend's abort() from
// any thread makes it fail with ShutDownError.

#include <mpi.h>

#include <chrono>
#include <exception>
#include <memory>
#include <vector>

#include "ops/completion.h"
#include "ops/mpi/mpi_waiter.h"

namespace runrun::mpi {

class MpiCompletion final : public Completion {
 public:
  MpiCompletion(std::shared_ptr<MpiWaiter> waiter, const char* op);
  ~MpiCompletion() override;
  MpiCompletion(const MpiCompletion&) = delete;
  MpiCompletion& operator=(const MpiCompletion&) = delete;

  // Where to post the next request (its slot in this completion), and staging memory that must
  // live until the operation ended (a copy of an overlapping input).
  MPI_Request* next_request();
  std::vector<char>& keep(std::vector<char> bytes);

  bool poll() override;
  bool wait_for(std::chrono::milliseconds timeout) override;

 private:
  template <typename Step>
  bool run(Step&& step);

  std::shared_ptr<MpiWaiter> waiter_;
  const char* op_;
  MpiWaiter::Clock::time_point posted_;
  std::vector<MPI_Request> requests_;
  std::vector<std::unique_ptr<std::vector<char>>> staged_;
  bool done_ = false;
  std::exception_ptr error_;
};

}  // namespace runrun::mpi

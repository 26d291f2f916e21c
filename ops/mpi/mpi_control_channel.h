#pragma once
// Why: the ControlChannel over MPI runs on its own communicator (a duplicate of the group's,
// made by MpiBackend::create_control_channel), so negotiation messages can never match a data
// collective's messages. It owns that communicator and its own MpiWaiter (abort flag, timeout,
// broken state), so it lives and is aborted independently of the backend that made it. Every
// call is posted non-blocking and completed by the waiter (abort, timeout, no busy spin).
// Threading contract: one driving thread; abort() from any thread.

#include <mpi.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "ops/backend.h"
#include "ops/mpi/mpi_waiter.h"

namespace runrun::mpi {

class MpiControlChannel final : public ControlChannel {
 public:
  // Takes ownership of `comm` (freed by the destructor while MPI is active).
  MpiControlChannel(MPI_Comm comm, std::chrono::milliseconds collective_timeout);
  ~MpiControlChannel() override;
  MpiControlChannel(const MpiControlChannel&) = delete;
  MpiControlChannel& operator=(const MpiControlChannel&) = delete;

  void allreduce_and(std::vector<uint64_t>& bits) override;
  std::vector<std::string> gather(const std::string& bytes, int root) override;
  void broadcast(std::string& bytes, int root) override;
  // Blocking and collective (MPI_Comm_create_group over this channel's communicator).
  std::unique_ptr<ControlChannel> create_subgroup(const std::vector<int>& ranks) override;
  void abort() override { waiter_->abort(); }

 private:
  void check_root(const char* op, int root) const;
  int to_int(const char* op, size_t value) const;

  MPI_Comm comm_;
  std::chrono::milliseconds timeout_;
  int rank_ = 0;
  int size_ = 1;
  std::shared_ptr<MpiWaiter> waiter_;
};

}  // namespace runrun::mpi

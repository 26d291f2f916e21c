#pragma once
// Why: the mpi backend's ControlChannel runs on its own duplicate of the group's communicator,
// so negotiation messages can never match a data collective's messages. Every call is posted
// non-blocking and completed by the backend's MpiWaiter (abort, timeout, no busy spin).
// Threading contract: driven by the backend's one thread.

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "ops/backend.h"
#include "ops/mpi/mpi_waiter.h"

namespace runrun::mpi {

class MpiControlChannel final : public ControlChannel {
 public:
  // `comm` stays owned by the backend and outlives this channel.
  MpiControlChannel(MPI_Comm comm, int rank, int size, std::shared_ptr<MpiWaiter> waiter);

  void allreduce_and(std::vector<uint64_t>& bits) override;
  std::vector<std::string> gather(const std::string& bytes, int root) override;
  void broadcast(std::string& bytes, int root) override;

 private:
  void check_root(const char* op, int root) const;
  int to_int(const char* op, size_t value) const;

  MPI_Comm comm_;
  int rank_;
  int size_;
  std::shared_ptr<MpiWaiter> waiter_;
};

}  // namespace runrun::mpi

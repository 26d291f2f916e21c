#pragma once
// Why: the local backend's ControlChannel; it exchanges over the world's control rendezvous,
// which is independent of the data rendezvous, as a process backend's control communicator is.
// It has its own endpoint (abort flag, broken state), so it is owned and aborted independently
// of the LocalBackend it was made by (LocalBackend::create_control_channel). Aborting it marks
// this rank gone in the world, as a process that aborts is gone for its peers.
// Threading contract: one driving thread; abort() from any thread.

#include <memory>
#include <string>
#include <vector>

#include "ops/backend.h"
#include "ops/local/local_endpoint.h"

namespace runrun {

class LocalControlChannel final : public ControlChannel {
 public:
  explicit LocalControlChannel(std::shared_ptr<LocalEndpoint> endpoint);

  void allreduce_and(std::vector<uint64_t>& bits) override;
  std::vector<std::string> gather(const std::string& bytes, int root) override;
  void broadcast(std::string& bytes, int root) override;
  std::unique_ptr<ControlChannel> create_subgroup(const std::vector<int>& ranks) override;
  void abort() override;

 private:
  void check_root(const char* op, int root) const;

  std::shared_ptr<LocalEndpoint> endpoint_;
};

}  // namespace runrun

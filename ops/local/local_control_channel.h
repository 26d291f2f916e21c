#pragma once
// Why: the local backend's ControlChannel; it exchanges over the world's control rendezvous,
// which is independent of the data rendezvous, as a process backend's control communicator is.
// Threading contract: driven by the backend's one thread; abort goes through the endpoint.

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

 private:
  void check_root(const char* op, int root) const;

  std::shared_ptr<LocalEndpoint> endpoint_;
};

}  // namespace runrun

#pragma once
// Why: negotiation of a job whose ranks share one host should not cross TCP either: this
// ControlChannel runs over a shared-memory Group of its own (its own segment, so it never
// interleaves with a data collective and is aborted and destroyed independently of the
// backend that made it). Subgroups (process sets) connect their own segment through the same
// board, under `<key>/set<N>`; as every member of the parent is on this host, so is every
// member of a subgroup.
// Threading contract: one driving thread; abort() from any thread.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ops/backend.h"
#include "ops/shm/shm_board.h"
#include "ops/shm/shm_group.h"

namespace runrun::shm {

class ShmControlChannel final : public ControlChannel {
 public:
  // `group` was connected under `key` of `board` (which subgroups share).
  ShmControlChannel(std::shared_ptr<Board> board, std::string key, std::unique_ptr<Group> group,
                    GroupOptions options);

  void allreduce_and(std::vector<uint64_t>& bits) override;
  std::vector<std::string> gather(const std::string& bytes, int root) override;
  void broadcast(std::string& bytes, int root) override;
  // Throws InternalError when the subgroup's segment cannot be made (with RUNRUN_GLOO_SHM=0 as
  // the way out): the parent's could, so that is a resource problem of this host.
  std::unique_ptr<ControlChannel> create_subgroup(const std::vector<int>& ranks) override;
  void abort() override { group_->abort(); }

 private:
  void check_root(const char* op, int root) const;

  std::shared_ptr<Board> board_;
  std::string key_;
  std::unique_ptr<Group> group_;
  GroupOptions options_;
  uint64_t subgroups_created_ = 0;
};

}  // namespace runrun::shm

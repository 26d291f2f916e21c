// Runtime: the collective process-set ops (add/remove, run on the global set's background
// thread, which changes the ProcessSetRegistry) and join (see runtime.h).
#include <algorithm>

#include "core/api/enqueue_checks.h"
#include "core/runtime/runtime.h"

namespace runrun {

int32_t Runtime::add_process_set(const std::vector<int>& ranks) {
  const int rank = topology_.rank;
  std::vector<int64_t> ranks64(ranks.begin(), ranks.end());
  bool valid = !ranks.empty() && std::is_sorted(ranks.begin(), ranks.end()) &&
               std::adjacent_find(ranks.begin(), ranks.end()) == ranks.end() &&
               ranks.front() >= 0 && ranks.back() < topology_.size;
  RUNRUN_ENFORCE(valid, InvalidArgumentError,
                 "add_process_set on rank " + std::to_string(rank) + ": ranks " +
                     shape_string(ranks64) + " must be non-empty, sorted, distinct and within 0.." +
                     std::to_string(topology_.size - 1));
  Request r;
  r.name = std::string(kReservedPrefix) + "process_set.add." + std::to_string(control_op_count_++);
  r.op = OpType::kProcessSetAdd;
  r.splits = ranks64;
  auto handle =
      submit_without_tensor(std::move(r), 0, [this, ranks](Transport& global, Handle& done) {
        registry_.check_unregistered(ranks);  // on every rank alike, before the collectives below
        // Both halves split, control first, in the same order on every rank (members get both,
        // other ranks neither).
        Transport sub;
        sub.control = global.control->create_subgroup(ranks);
        sub.data = global.data->create_subgroup(ranks);
        int32_t id = registry_.add(ranks, [&](int32_t new_id) -> std::shared_ptr<ProcessSetWorker> {
          if (!sub.data) return nullptr;
          return std::make_shared<ProcessSetWorker>(new_id, std::move(sub), config_, logger_,
                                                    &timeline_, background_cpu_, entry_pool_);
        });
        done.set_result(id);
      });
  handle->wait();
  // The op's own error: a refused set stays an invalid argument, while a peer's shutdown, a
  // lost peer or a timeout is a failure of the runtime.
  if (handle->code() != ErrorCode::kOk) throw_error(handle->code(), RUNRUN_WHERE, handle->error());
  return static_cast<int32_t>(handle->result());
}

void Runtime::remove_process_set(int32_t id) {
  RUNRUN_ENFORCE(id != 0, InvalidArgumentError,
                 "remove_process_set: the global process set (0) cannot be removed");
  process_set_ranks(id);  // unknown ids fail here, at once
  Request r;
  r.name =
      std::string(kReservedPrefix) + "process_set.remove." + std::to_string(control_op_count_++);
  r.op = OpType::kProcessSetRemove;
  r.root = id;
  auto handle = submit_without_tensor(std::move(r), 0, [this, id](Transport&, Handle&) {
    std::shared_ptr<ProcessSetWorker> removed = registry_.remove(id);
    if (removed) {  // every member does this at the same point
      removed->shutdown("process set " + std::to_string(id) +
                        " was removed (remove_process_set) "
                        "while this op was pending on rank " +
                        std::to_string(topology_.rank));
    }
  });
  handle->wait();
  if (handle->code() != ErrorCode::kOk) throw_error(handle->code(), RUNRUN_WHERE, handle->error());
}

std::vector<int> Runtime::process_set_ranks(int32_t id) const { return registry_.ranks(id); }

int Runtime::process_set_rank(int32_t id) const { return registry_.rank_in(id); }

std::shared_ptr<Handle> Runtime::join(int32_t process_set) {
  Request r;
  r.name = std::string(kReservedPrefix) + "join." + std::to_string(process_set);
  r.op = OpType::kJoin;
  return submit_without_tensor(std::move(r), process_set);
}

}  // namespace runrun

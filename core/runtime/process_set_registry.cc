#include "core/runtime/process_set_registry.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "common/errors.h"
#include "core/negotiation/message.h"

namespace runrun {

ProcessSetRegistry::ProcessSetRegistry(int rank, int size) : rank_(rank) {
  std::vector<int> everyone(static_cast<size_t>(size));
  std::iota(everyone.begin(), everyone.end(), 0);
  ranks_[0] = std::move(everyone);
}

void ProcessSetRegistry::set_global_worker(std::shared_ptr<ProcessSetWorker> worker) {
  ErrorCode failed = ErrorCode::kOk;
  std::string message;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    workers_[0] = worker;
    failed = failed_code_;
    message = failed_message_;
  }
  // A peer lost between the peer monitor's start and now.
  if (worker && failed != ErrorCode::kOk) worker->fail(failed, message);
}

void ProcessSetRegistry::check_unregistered(const std::vector<int>& ranks) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [id, existing] : ranks_) {
    RUNRUN_ENFORCE(existing != ranks, InvalidArgumentError,
                   "add_process_set: a process set with these ranks already exists (id " +
                       std::to_string(id) + "); reuse it");
  }
}

int32_t ProcessSetRegistry::add(std::vector<int> ranks, const MakeWorker& make_worker) {
  int32_t id = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    id = next_id_;  // only this thread adds: the id stays free while the worker is made
  }
  std::shared_ptr<ProcessSetWorker> worker = make_worker(id);
  ErrorCode failed = ErrorCode::kOk;
  std::string message;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++next_id_;
    ranks_[id] = std::move(ranks);
    if (worker) workers_[id] = worker;
    failed = failed_code_;
    message = failed_message_;
  }
  // Outside the lock (fail() calls into the worker); registered first, so either fail_all saw
  // this worker or this sees its error.
  if (worker && failed != ErrorCode::kOk) worker->fail(failed, message);
  return id;
}

std::shared_ptr<ProcessSetWorker> ProcessSetRegistry::remove(int32_t id) {
  RUNRUN_ENFORCE(id != 0, InvalidArgumentError,
                 "remove_process_set: the global process set (0) cannot be removed");
  std::lock_guard<std::mutex> lock(mutex_);
  RUNRUN_ENFORCE(ranks_.count(id), InvalidArgumentError,
                 "remove_process_set: process set " + std::to_string(id) + " does not exist");
  ranks_.erase(id);
  std::shared_ptr<ProcessSetWorker> removed;
  if (auto it = workers_.find(id); it != workers_.end()) {
    removed = std::move(it->second);
    workers_.erase(it);
  }
  return removed;
}

std::shared_ptr<ProcessSetWorker> ProcessSetRegistry::worker(int32_t id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = workers_.find(id);
  if (it != workers_.end()) return it->second;
  auto set = ranks_.find(id);
  RUNRUN_ENFORCE(set != ranks_.end(), InvalidArgumentError,
                 "process set " + std::to_string(id) + " does not exist on rank " +
                     std::to_string(rank_) +
                     ": use 0 (the global set) or an id returned by add_process_set");
  std::vector<int64_t> ranks(set->second.begin(), set->second.end());
  throw InvalidArgumentError(RUNRUN_WHERE,
                             "rank " + std::to_string(rank_) + " is not a member of process set " +
                                 std::to_string(id) + " (ranks " + shape_string(ranks) +
                                 "): only its members may enqueue ops on it");
}

std::shared_ptr<ProcessSetWorker> ProcessSetRegistry::find_worker(int32_t id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = workers_.find(id);
  return it == workers_.end() ? nullptr : it->second;
}

std::vector<int> ProcessSetRegistry::ranks(int32_t id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = ranks_.find(id);
  RUNRUN_ENFORCE(it != ranks_.end(), InvalidArgumentError,
                 "process set " + std::to_string(id) + " does not exist");
  return it->second;
}

int ProcessSetRegistry::rank_in(int32_t id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = ranks_.find(id);
  if (it == ranks_.end()) return -1;
  auto pos = std::find(it->second.begin(), it->second.end(), rank_);
  return pos == it->second.end() ? -1 : static_cast<int>(pos - it->second.begin());
}

std::vector<std::shared_ptr<ProcessSetWorker>> ProcessSetRegistry::workers() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::shared_ptr<ProcessSetWorker>> all;
  for (const auto& [id, worker] : workers_) all.push_back(worker);
  return all;
}

std::vector<std::pair<int32_t, std::shared_ptr<ProcessSetWorker>>> ProcessSetRegistry::sets_with(
    int member) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::pair<int32_t, std::shared_ptr<ProcessSetWorker>>> found;
  for (const auto& [id, worker] : workers_) {
    const std::vector<int>& members = ranks_.at(id);
    if (std::find(members.begin(), members.end(), member) != members.end()) {
      found.emplace_back(id, worker);
    }
  }
  return found;
}

void ProcessSetRegistry::fail_all(ErrorCode code, const std::string& message) {
  std::vector<std::shared_ptr<ProcessSetWorker>> all;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failed_code_ == ErrorCode::kOk) {
      failed_code_ = code;
      failed_message_ = message;
    }
    for (const auto& [id, worker] : workers_) all.push_back(worker);
  }
  for (auto& worker : all) worker->fail(code, message);
}

}  // namespace runrun

#include "launcher/processes/failure_ledger.h"

#include <algorithm>

#include "launcher/processes/partition_verdict.h"

namespace runrun::launcher {
namespace {

int exit_code_of(const RankEvent& failure) {
  if (failure.kind == RankEvent::Kind::kSignaled) return 128 + failure.value;
  return failure.value == 0 ? 1 : failure.value;
}

std::string host_name(int rank, const std::vector<int>& host_of_rank,
                      const std::vector<std::string>& host_labels) {
  if (rank < 0 || rank >= static_cast<int>(host_of_rank.size())) return "?";
  const int host = host_of_rank[static_cast<std::size_t>(rank)];
  return host >= 0 && host < static_cast<int>(host_labels.size())
             ? host_labels[static_cast<std::size_t>(host)]
             : "?";
}

}  // namespace

FailureLedger::FailureLedger(int num_proc)
    : num_proc_(num_proc),
      causes_(static_cast<std::size_t>(num_proc)),
      lost_peer_(static_cast<std::size_t>(num_proc), -1),
      init_failed_(static_cast<std::size_t>(num_proc)),
      end_heard_(static_cast<std::size_t>(num_proc)) {}

void FailureLedger::note(const RankEvent& event) {
  if (!valid(event.rank)) return;
  const auto rank = static_cast<std::size_t>(event.rank);
  switch (event.kind) {
    case RankEvent::Kind::kPeerLost:
    case RankEvent::Kind::kPeerSilent:
      if (lost_peer_[rank] < 0 && valid(event.value) && event.value != event.rank) {
        lost_peer_[rank] = event.value;
      }
      if (event.kind == RankEvent::Kind::kPeerLost) causes_[rank].push_back(event);
      break;
    case RankEvent::Kind::kPeerLeft:
      causes_[rank].push_back(event);
      break;
    case RankEvent::Kind::kInitFailed:
      init_failed_[rank] = true;
      break;
    case RankEvent::Kind::kExited:
    case RankEvent::Kind::kSignaled:
    case RankEvent::Kind::kStopped:
      end_heard_[rank] = true;
      break;
    case RankEvent::Kind::kStarted:
      break;
  }
}

void FailureLedger::record_failure(const RankEvent& failure) { failures_.push_back(failure); }

const RankEvent* FailureLedger::failure_of(int rank) const {
  const auto it = std::find_if(failures_.begin(), failures_.end(),
                               [&](const RankEvent& f) { return f.rank == rank; });
  return it == failures_.end() ? nullptr : &*it;
}

bool FailureLedger::failed_in_init(int rank) const {
  return valid(rank) && init_failed_[static_cast<std::size_t>(rank)];
}

const RankEvent& FailureLedger::culprit() const {
  for (const RankEvent& failure : failures_) {
    if (failed_in_init(failure.rank)) return failure;
  }
  const RankEvent* named = &failures_.front();
  std::vector<bool> seen(static_cast<std::size_t>(num_proc_));
  seen[static_cast<std::size_t>(named->rank)] = true;
  for (bool moved = true; moved;) {
    moved = false;
    for (const RankEvent& cause : causes_[static_cast<std::size_t>(named->rank)]) {
      if (!valid(cause.value) || seen[static_cast<std::size_t>(cause.value)]) continue;
      if (const RankEvent* peer = failure_of(cause.value)) {
        seen[static_cast<std::size_t>(cause.value)] = true;
        named = peer;
        moved = true;
        break;
      }
    }
  }
  return *named;
}

FailureLedger::Summary FailureLedger::summarize(const std::vector<int>& host_of_rank,
                                                const std::vector<std::string>& host_labels) const {
  const RankEvent& first = failures_.front();
  const RankEvent& named = culprit();
  if (!failed_in_init(named.rank) && static_cast<int>(host_of_rank.size()) == num_proc_) {
    std::vector<RankLossReport> reports(static_cast<std::size_t>(num_proc_));
    for (std::size_t rank = 0; rank < reports.size(); ++rank) {
      reports[rank] = {host_of_rank[rank], lost_peer_[rank], end_heard_[rank]};
    }
    if (const auto partition = find_partition(reports)) {
      return {describe_partition(*partition, host_labels), exit_code_of(first)};
    }
  }
  std::string text = "rank " + std::to_string(named.rank) + " on host " +
                     host_name(named.rank, host_of_rank, host_labels) + " failed" +
                     (failed_in_init(named.rank) ? " in init()" : "") + " with " +
                     describe_rank_end(named);
  const auto& causes = causes_[static_cast<std::size_t>(named.rank)];
  if (!failed_in_init(named.rank) && !causes.empty() &&
      failure_of(causes.front().value) == nullptr) {
    // Its peers ended without failing (stopped by mpirun, or exit 0): say why it failed.
    const RankEvent& cause = causes.front();
    text += std::string(" after ") +
            (cause.kind == RankEvent::Kind::kPeerLost ? "losing" : "the shutdown of") + " rank " +
            std::to_string(cause.value);
  }
  if (failed_in_init(named.rank)) text += " (its error is above)";
  text += "; the other ranks were stopped";
  if (failures_.size() > 1) {
    text += " (" + std::to_string(failures_.size()) + " ranks failed in all";
    if (named.rank != first.rank) {
      int because_of = named.rank;  // the cause of the first rank that the summary followed
      for (const RankEvent& cause : causes_[static_cast<std::size_t>(first.rank)]) {
        if (failure_of(cause.value) != nullptr) {
          because_of = cause.value;
          break;
        }
      }
      text += "; rank " + std::to_string(first.rank) + " ended first, failing because of rank " +
              std::to_string(because_of);
    }
    text += ")";
  }
  return {text, exit_code_of(named)};
}

}  // namespace runrun::launcher

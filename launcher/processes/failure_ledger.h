#pragma once
// Why: the launcher's one-line summary must name the rank that made the job fail, not the first
// one to exit: ranks that fail because of a peer (lost, or shut down) say so and often exit
// first (common/rank_events.h); a rank that failed in init() for a reason of its own (a setting
// it refused) is the cause even when a healthy peer, left waiting in init(), fails before it;
// and when every rank lost the ranks across a cut link, no rank is the cause
// (launcher/processes/partition_verdict.h). The ledger keeps what the ranks reported and turns it
// into
// that summary, apart from the supervisor's process handling so that it can be tested alone.
// Thread-safety: none; the supervisor's thread alone uses it.

#include <cstddef>
#include <string>
#include <vector>

#include "launcher/processes/rank_report.h"

namespace runrun::launcher {

class FailureLedger {
 public:
  explicit FailureLedger(int num_proc);

  // A rank event read from the ranks' output: its causes (lost, left), the peers it reported
  // lost or silent, an init() failure of its own, and whether its shim reported its end.
  // Failures themselves are recorded with record_failure.
  void note(const RankEvent& event);
  // A rank failed (exited non-zero or by a signal), in arrival order.
  void record_failure(const RankEvent& failure);

  bool empty() const { return failures_.empty(); }
  std::size_t count() const { return failures_.size(); }
  const RankEvent& first() const { return failures_.front(); }
  // The failure of `rank`, or null.
  const RankEvent* failure_of(int rank) const;
  bool failed_in_init(int rank) const;

  // The failure to name: the first rank to fail that reported an init() failure of its own;
  // else the first failure, or, when its rank failed because of a peer that failed too, that
  // peer's (followed along such causes, each rank once). Requires !empty().
  const RankEvent& culprit() const;

  // The summary line (without "runrun: ") and the launcher's exit status for it. Requires
  // !empty(). `host_of_rank`: each rank's host index; `host_labels`: the hosts' names.
  struct Summary {
    std::string text;
    int exit_code = 1;
  };
  Summary summarize(const std::vector<int>& host_of_rank,
                    const std::vector<std::string>& host_labels) const;

 private:
  bool valid(int rank) const { return rank >= 0 && rank < num_proc_; }

  int num_proc_;
  std::vector<RankEvent> failures_;
  std::vector<std::vector<RankEvent>> causes_;  // per rank: kPeerLost/kPeerLeft, in order
  std::vector<int> lost_peer_;                  // per rank: first peer reported lost or silent
  std::vector<bool> init_failed_;
  std::vector<bool> end_heard_;
};

}  // namespace runrun::launcher

#pragma once
// Why: `runrun --profile` names the slowest rank and how late it is (docs/profiling.md) from the
// negotiation itself, with no synchronized clocks. The round that agrees a tensor ends on every
// rank at (nearly) the same moment: the same collective returns everywhere. Each rank's age of
// the tensor at that moment (end of the round - its enqueue, on its own steady clock) therefore
// places its readiness on one common time line: on rank 0's steady clock, rank r's readiness
// arrived at (end of the round on rank 0 - age_r). Rank r's lateness for the tensor is its
// arrival minus the earliest rank's arrival = (largest age) - age_r.
//
// Why not time the arrival of each rank's ready bits at rank 0: a rank blocked in a round that
// rank 0 has not entered yet is invisible to rank 0 until rank 0 enters it, so rank 0 could
// never see that it is itself the late one. Ages measured by each rank do not have that blind
// spot.
//
// Two parts:
//  - RankLatenessStats (rank 0): per-rank lateness samples, median and mean over the last
//    `window` samples of each rank (a ring per rank: bounded memory, O(1) per sample).
//  - RankLatenessRecorder (every rank of the global set, only when profiling): buffers this
//    rank's ages of the tensors agreed in each round and, after 1, 2, 4, ... then every
//    kFlushRounds rounds that agreed something (the same rounds on every rank: `ready` is
//    agreed), gathers the buffers at rank 0 over the control channel (one small gather per
//    flush) and feeds RankLatenessStats there: a short job has figures early, a long one pays
//    one gather per kFlushRounds rounds.
// Thread-safety: the recorder is owned by the process set's background thread; the stats'
// snapshot() may be called from any thread (a mutex guards the samples).

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "ops/backend.h"

namespace runrun {

class RankLatenessStats {
 public:
  RankLatenessStats(int size, size_t window);

  // ages_s[r][i]: how long before the agreement rank r's readiness of tensor i arrived
  // (seconds); a negative age means rank r had no entry for it (it had joined). Every rank's
  // vector has the same tensors in the same order; a shorter one is a malformed message and is
  // ignored. A tensor nobody has an age for is skipped.
  void add(const std::vector<std::vector<float>>& ages_s);

  struct PerRank {
    double median_s = 0;   // over the window
    double mean_s = 0;     // over the window
    uint64_t samples = 0;  // ever added
  };
  std::vector<PerRank> snapshot() const;  // one per rank

 private:
  void push(size_t rank, float lateness);

  const size_t window_;
  mutable std::mutex mutex_;
  std::vector<std::vector<float>> rings_;  // per rank, up to window_ samples
  std::vector<uint64_t> counts_;           // per rank, samples ever added
};

class RankLatenessRecorder {
 public:
  static constexpr size_t kFlushRounds = 16;  // rounds with agreed work between gathers, at most
  static constexpr size_t kWindow = 1024;     // samples per rank in the median and mean

  RankLatenessRecorder(ControlChannel& channel, int rank, int size);

  // This rank's ages (seconds; negative: no entry here) of the tensors one round agreed, in the
  // round's (agreed) order. Every rank calls it after the same rounds with the same number of
  // ages; it may run a gather over the control channel (collective).
  void after_round(const std::vector<float>& ages_s);

  // Rank 0's statistics (empty vectors elsewhere).
  std::vector<RankLatenessStats::PerRank> snapshot() const;

 private:
  void flush();

  ControlChannel& channel_;
  int rank_;
  RankLatenessStats stats_;  // filled on rank 0 only
  std::vector<float> buffered_;
  size_t rounds_ = 0;       // buffered rounds
  size_t flush_every_ = 1;  // rounds until the next gather: doubles up to kFlushRounds
};

}  // namespace runrun

#pragma once
// Why: the decision half of autotuning, kept apart from timing and messaging so it is a pure,
// deterministic function of the scores it is fed (unit-testable, and the same on whichever rank
// runs it). It is a coordinate search: warmup samples are discarded; the defaults are measured
// first and are the incumbent; then one dimension at a time (fusion threshold, cycle time,
// hierarchical allreduce when available) every other value of that dimension is measured with
// the others held at the incumbent's. A candidate's score is the median of its samples. The
// dimension's best candidate replaces the incumbent only when its median beats the incumbent's
// by more than `margin` (a fraction): the noise guard. So the frozen setting is the defaults
// unless something measured clearly better, which is what keeps autotuning "never worse than
// the defaults by more than the noise". After the last dimension the incumbent is frozen.
// Thread-safety: a plain value; used by one thread (the global set's background thread).

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace runrun {

// The values the autotuner sets; identical on every rank at every round.
struct TunedParameters {
  size_t fusion_threshold = 0;  // bytes
  std::chrono::microseconds cycle_time{0};
  bool hierarchical = false;
  bool operator==(const TunedParameters&) const = default;
};

// "fusion_threshold=4 MiB cycle_time=1 ms hierarchical_allreduce=off" (logs, errors).
std::string describe(const TunedParameters& parameters);

struct AutotuneSearchOptions {
  int warmup_samples = 3;
  int samples_per_candidate = 3;
  double margin = 0.05;
};

class AutotuneSearch {
 public:
  // The fusion thresholds and cycle times tried besides the defaults.
  static const std::vector<size_t>& fusion_candidates();
  static const std::vector<std::chrono::microseconds>& cycle_candidates();

  AutotuneSearch(TunedParameters defaults, bool hierarchical_available,
                 AutotuneSearchOptions options);

  enum class Kind { kWarmup, kSample };
  // Records the score (higher is better) of one sample measured with current(); returns what
  // the sample counted as. After done(), does nothing.
  Kind record(double score);

  // What the next sample measures; once done(), the frozen setting.
  const TunedParameters& current() const { return current_; }
  bool done() const { return done_; }
  const TunedParameters& defaults() const { return defaults_; }
  const TunedParameters& best() const { return best_; }
  // Median scores: of the incumbent (after done(), of the frozen setting), of the defaults.
  double best_score() const { return best_score_; }
  double default_score() const { return default_score_; }

 private:
  void start_dimension();
  void finish_dimension();

  TunedParameters defaults_;
  bool hierarchical_available_;
  AutotuneSearchOptions options_;
  int warmup_left_;
  TunedParameters current_;
  TunedParameters best_;
  double best_score_ = 0;
  double default_score_ = 0;
  bool measured_defaults_ = false;
  int dimension_ = -1;  // -1: measuring the defaults; 0 fusion, 1 cycle time, 2 hierarchical
  std::vector<TunedParameters> candidates_;  // of the current dimension
  std::vector<double> medians_;              // of candidates_[0 .. medians_.size())
  std::vector<double> samples_;              // of current_
  bool done_ = false;
};

// Median of `values` (non-empty); the mean of the middle two for an even count.
double median(std::vector<double> values);

}  // namespace runrun

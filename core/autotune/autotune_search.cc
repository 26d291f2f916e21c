#include "core/autotune/autotune_search.h"

#include <algorithm>
#include <sstream>

namespace runrun {

std::string describe(const TunedParameters& p) {
  std::ostringstream out;
  out << "fusion_threshold=";
  if (p.fusion_threshold % (1024 * 1024) == 0) {
    out << p.fusion_threshold / (1024 * 1024) << " MiB";
  } else {
    out << p.fusion_threshold << " bytes";
  }
  out << " cycle_time=" << static_cast<double>(p.cycle_time.count()) / 1000.0 << " ms"
      << " hierarchical_allreduce=" << (p.hierarchical ? "on" : "off");
  return out.str();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

const std::vector<size_t>& AutotuneSearch::fusion_candidates() {
  static const std::vector<size_t> kValues = {size_t{1} << 20, size_t{2} << 20,  size_t{4} << 20,
                                              size_t{8} << 20, size_t{16} << 20, size_t{32} << 20,
                                              size_t{64} << 20};
  return kValues;
}

const std::vector<std::chrono::microseconds>& AutotuneSearch::cycle_candidates() {
  using us = std::chrono::microseconds;
  static const std::vector<us> kValues = {us{500}, us{1000}, us{2500}, us{5000}, us{10000}};
  return kValues;
}

AutotuneSearch::AutotuneSearch(TunedParameters defaults, bool hierarchical_available,
                               AutotuneSearchOptions options)
    : defaults_(defaults),
      hierarchical_available_(hierarchical_available),
      options_(options),
      warmup_left_(std::max(0, options.warmup_samples)),
      current_(defaults),
      best_(defaults) {
  options_.samples_per_candidate = std::max(1, options_.samples_per_candidate);
}

AutotuneSearch::Kind AutotuneSearch::record(double score) {
  if (done_) return Kind::kSample;
  if (warmup_left_ > 0) {
    --warmup_left_;
    return Kind::kWarmup;
  }
  samples_.push_back(score);
  if (static_cast<int>(samples_.size()) < options_.samples_per_candidate) return Kind::kSample;
  const double score_median = median(samples_);
  samples_.clear();
  if (!measured_defaults_) {
    measured_defaults_ = true;
    best_score_ = default_score_ = score_median;
    dimension_ = 0;
    start_dimension();
    return Kind::kSample;
  }
  medians_.push_back(score_median);
  if (medians_.size() < candidates_.size()) {
    current_ = candidates_[medians_.size()];
    return Kind::kSample;
  }
  finish_dimension();
  ++dimension_;
  start_dimension();
  return Kind::kSample;
}

// Fills candidates_ with the other values of dimension_ (skipping empty dimensions); freezes
// the incumbent after the last one.
void AutotuneSearch::start_dimension() {
  candidates_.clear();
  medians_.clear();
  for (; dimension_ <= 2 && candidates_.empty(); ++dimension_) {
    TunedParameters candidate = best_;
    if (dimension_ == 0) {
      for (size_t value : fusion_candidates()) {
        if (value == best_.fusion_threshold) continue;
        candidate.fusion_threshold = value;
        candidates_.push_back(candidate);
      }
    } else if (dimension_ == 1) {
      for (auto value : cycle_candidates()) {
        if (value == best_.cycle_time) continue;
        candidate.cycle_time = value;
        candidates_.push_back(candidate);
      }
    } else if (hierarchical_available_) {
      candidate.hierarchical = !best_.hierarchical;
      candidates_.push_back(candidate);
    }
    if (!candidates_.empty()) break;
  }
  if (candidates_.empty()) {
    done_ = true;
    current_ = best_;
    return;
  }
  current_ = candidates_[0];
}

void AutotuneSearch::finish_dimension() {
  size_t winner = 0;
  for (size_t i = 1; i < medians_.size(); ++i) {
    if (medians_[i] > medians_[winner]) winner = i;  // ties: the first (the smaller value)
  }
  if (medians_[winner] > best_score_ * (1.0 + options_.margin)) {
    best_ = candidates_[winner];
    best_score_ = medians_[winner];
  }
}

}  // namespace runrun

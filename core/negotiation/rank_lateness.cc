#include "core/negotiation/rank_lateness.h"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace runrun {

RankLatenessStats::RankLatenessStats(int size, size_t window)
    : window_(std::max<size_t>(window, 1)),
      rings_(static_cast<size_t>(std::max(size, 0))),
      counts_(static_cast<size_t>(std::max(size, 0)), 0) {}

void RankLatenessStats::push(size_t rank, float lateness) {
  std::vector<float>& ring = rings_[rank];
  if (ring.size() < window_) {
    ring.push_back(lateness);
  } else {
    ring[counts_[rank] % window_] = lateness;
  }
  ++counts_[rank];
}

void RankLatenessStats::add(const std::vector<std::vector<float>>& ages_s) {
  if (ages_s.size() != rings_.size() || ages_s.empty()) return;
  const size_t tensors = ages_s[0].size();
  for (const auto& ages : ages_s) {
    if (ages.size() != tensors) return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t i = 0; i < tensors; ++i) {
    float earliest = -1;  // the largest age: the rank whose readiness arrived first
    for (const auto& ages : ages_s) earliest = std::max(earliest, ages[i]);
    if (earliest < 0) continue;
    for (size_t r = 0; r < ages_s.size(); ++r) {
      if (ages_s[r][i] >= 0) push(r, earliest - ages_s[r][i]);
    }
  }
}

std::vector<RankLatenessStats::PerRank> RankLatenessStats::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<PerRank> out(rings_.size());
  for (size_t r = 0; r < rings_.size(); ++r) {
    out[r].samples = counts_[r];
    std::vector<float> values = rings_[r];
    if (values.empty()) continue;
    out[r].mean_s =
        std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
    const size_t mid = values.size() / 2;
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid),
                     values.end());
    double median = values[mid];
    if (values.size() % 2 == 0) {
      median = (median + *std::max_element(values.begin(),
                                           values.begin() + static_cast<std::ptrdiff_t>(mid))) /
               2;
    }
    out[r].median_s = median;
  }
  return out;
}

RankLatenessRecorder::RankLatenessRecorder(ControlChannel& channel, int rank, int size)
    : channel_(channel), rank_(rank), stats_(rank == 0 ? size : 0, kWindow) {}

void RankLatenessRecorder::after_round(const std::vector<float>& ages_s) {
  if (ages_s.empty()) return;
  buffered_.insert(buffered_.end(), ages_s.begin(), ages_s.end());
  if (++rounds_ < flush_every_) return;
  flush();
  flush_every_ = std::min(2 * flush_every_, kFlushRounds);
}

void RankLatenessRecorder::flush() {
  std::string bytes(buffered_.size() * sizeof(float), '\0');
  if (!bytes.empty()) std::memcpy(bytes.data(), buffered_.data(), bytes.size());
  buffered_.clear();
  rounds_ = 0;
  std::vector<std::string> gathered = channel_.gather(bytes, 0);
  if (rank_ != 0) return;
  std::vector<std::vector<float>> ages(gathered.size());
  for (size_t r = 0; r < gathered.size(); ++r) {
    ages[r].resize(gathered[r].size() / sizeof(float));
    if (!ages[r].empty()) std::memcpy(ages[r].data(), gathered[r].data(), gathered[r].size());
  }
  stats_.add(ages);
}

std::vector<RankLatenessStats::PerRank> RankLatenessRecorder::snapshot() const {
  return stats_.snapshot();
}

}  // namespace runrun

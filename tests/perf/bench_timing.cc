#include "tests/perf/bench_timing.h"

#include <algorithm>
#include <chrono>

namespace runrun::perf {
namespace {

// One block of `batch` calls after a barrier; the slowest rank's seconds per call.
double time_block(RawComm& comm, const Side& side, int batch, bool shared_clock) {
  using Clock = std::chrono::steady_clock;
  comm.barrier();
  const auto start = Clock::now();
  for (int i = 0; i < batch; ++i) side();
  const auto end = Clock::now();
  if (shared_clock) {
    const auto seconds = [](Clock::time_point t) {
      return std::chrono::duration<double>(t.time_since_epoch()).count();
    };
    const double last_start = comm.max(seconds(start));
    return (comm.max(seconds(end)) - last_start) / batch;
  }
  return comm.max(std::chrono::duration<double>(end - start).count() / batch);
}

}  // namespace

Summary summarize(std::vector<double> us) {
  Summary s;
  s.samples = us.size();
  if (us.empty()) return s;
  std::sort(us.begin(), us.end());
  const size_t n = us.size();
  s.median_us = n % 2 ? us[n / 2] : (us[n / 2 - 1] + us[n / 2]) / 2;
  s.min_us = us.front();
  return s;
}

int batch_for(size_t bytes) {
  constexpr size_t kBlockBytes = size_t{1} << 20;
  constexpr size_t kMaxBatch = 50;
  if (bytes == 0) return static_cast<int>(kMaxBatch);
  return static_cast<int>(std::clamp<size_t>(kBlockBytes / bytes, 1, kMaxBatch));
}

std::vector<Summary> time_sides(const TimingPlan& plan, RawComm& comm,
                                const std::vector<Side>& sides) {
  const size_t n = sides.size();
  for (int w = 0; w < plan.warmup; ++w) {
    for (const Side& side : sides) time_block(comm, side, 1, plan.shared_clock);
  }
  std::vector<std::vector<double>> us(n);
  double spent = 0;
  for (int iter = 0; iter < plan.iters; ++iter) {
    for (size_t k = 0; k < n; ++k) {
      const size_t s = (k + static_cast<size_t>(iter)) % n;
      const double per_call = time_block(comm, sides[s], plan.batch, plan.shared_clock);
      us[s].push_back(per_call * 1e6);
      spent += per_call * plan.batch;
    }
    if (iter + 1 >= kMinIters && spent > plan.budget_s) break;
  }
  std::vector<Summary> out;
  for (auto& samples : us) out.push_back(summarize(std::move(samples)));
  return out;
}

}  // namespace runrun::perf

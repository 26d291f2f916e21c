#include "core/autotune/autotuner.h"

#include <algorithm>
#include <sstream>

#include "common/errors.h"
#include "core/execution/fusion_planner.h"

namespace runrun {
namespace {

std::string encode(const TunedParameters& p, bool frozen) {
  std::ostringstream out;
  out << p.fusion_threshold << ' ' << p.cycle_time.count() << ' ' << (p.hierarchical ? 1 : 0) << ' '
      << (frozen ? 1 : 0);
  return out.str();
}

TunedParameters decode(const std::string& text, bool* frozen, int rank) {
  std::istringstream in(text);
  TunedParameters p;
  int64_t cycle_us = 0;
  int hierarchical = 0, is_frozen = 0;
  in >> p.fusion_threshold >> cycle_us >> hierarchical >> is_frozen;
  RUNRUN_ENFORCE(!in.fail(), InternalError,
                 "autotune on rank " + std::to_string(rank) +
                     ": rank 0's setting could not be read: '" + text + "'");
  p.cycle_time = std::chrono::microseconds(cycle_us);
  p.hierarchical = hierarchical != 0;
  *frozen = is_frozen != 0;
  return p;
}

}  // namespace

std::chrono::nanoseconds Autotuner::steady_now() {
  return std::chrono::steady_clock::now().time_since_epoch();
}

Autotuner::Autotuner(ControlChannel& channel, int rank, const Config::Autotune& options,
                     TunedParameters defaults, bool hierarchical_available, Logger logger,
                     Clock clock)
    : channel_(channel),
      rank_(rank),
      options_(options),
      logger_(std::move(logger)),
      clock_(std::move(clock)),
      search_(defaults, hierarchical_available,
              AutotuneSearchOptions{options.warmup_samples, options.samples_per_candidate,
                                    options.margin}),
      window_start_(clock_()) {
  changes_.emplace_back(0, defaults);
  if (rank_ == 0 && !options_.log_path.empty()) {
    std::string why;
    if (!log_.open(options_.log_path, &why)) {
      logger_->warn(
          "autotune: cannot write the log RUNRUN_AUTOTUNE_LOG='{}' on rank 0: {}; "
          "tuning goes on without it",
          options_.log_path, why);
    }
  }
}

TunedParameters Autotuner::current() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return changes_.back().second;
}

std::vector<std::pair<uint64_t, TunedParameters>> Autotuner::changes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return changes_;
}

std::optional<TunedParameters> Autotuner::after_round(const ResponseList& ready) {
  if (frozen_.load() || ready.empty()) return std::nullopt;
  ++rounds_;
  for (const Response& response : ready) window_bytes_ += response_bytes(response);
  if (++rounds_in_window_ < options_.steps_per_sample) return std::nullopt;
  const TunedParameters before = current();
  bool now_frozen = false;
  TunedParameters next = end_sample(clock_() - window_start_, &now_frozen);
  rounds_in_window_ = 0;
  window_bytes_ = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!(next == before)) changes_.emplace_back(rounds_, next);
  }
  frozen_ = now_frozen;
  window_start_ = clock_();  // after the messages: they are not part of the next sample
  if (next == before) return std::nullopt;
  return next;
}

// Collective over the control channel: every rank's elapsed time to rank 0, rank 0's decision
// to every rank.
TunedParameters Autotuner::end_sample(std::chrono::nanoseconds elapsed, bool* frozen) {
  const auto gathered = channel_.gather(std::to_string(elapsed.count()), 0);
  std::string decision;
  if (rank_ == 0) decision = decide(gathered);
  channel_.broadcast(decision, 0);
  return decode(decision, frozen, rank_);
}

// Rank 0: scores the sample, advances the search, logs; returns the encoded next setting.
std::string Autotuner::decide(const std::vector<std::string>& elapsed_by_rank) {
  int64_t slowest_ns = 1;
  for (const std::string& text : elapsed_by_rank) {
    slowest_ns = std::max<int64_t>(slowest_ns, std::stoll(text));
  }
  const double seconds = static_cast<double>(slowest_ns) * 1e-9;
  const double score = static_cast<double>(window_bytes_) / seconds;
  const TunedParameters measured = search_.current();
  const bool warmup = search_.record(score) == AutotuneSearch::Kind::kWarmup;
  log_.row(++samples_, warmup ? "warmup" : "sample", rounds_, measured, window_bytes_, seconds,
           score);
  if (search_.done()) {
    const TunedParameters& best = search_.best();
    log_.row(samples_ + 1, "final", rounds_, best, 0, 0, search_.best_score());
    const bool kept = best == search_.defaults();
    logger_->info(
        "autotune: frozen after {} samples ({} rounds): {} ({}; median {:.3g} MB/s, "
        "defaults {:.3g} MB/s)",
        samples_, rounds_, describe(best),
        kept ? "kept the defaults: nothing beat them by more than the margin"
             : "defaults were " + describe(search_.defaults()),
        search_.best_score() / 1e6, search_.default_score() / 1e6);
  }
  return encode(search_.current(), search_.done());
}

}  // namespace runrun

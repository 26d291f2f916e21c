// Autotuning (core/autotune/autotune_search.h, core/autotune/autotuner.h): the search's decisions
// from given
// scores, agreement across ranks with a scoring clock the test controls (deterministic, never
// timed), the CSV log, and a runtime that tunes while its allreduces must stay exact.
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <numeric>
#include <thread>

#include "common/knobs.h"
#include "core/autotune/autotuner.h"
#include "ops/hierarchical/hierarchical_backend.h"
#include "ops/local/local_backend.h"
#include "tests/unit/core/rank_threads.h"

using namespace runrun;
using namespace std::chrono_literals;
using runrun::testing::require_ok;

namespace {

constexpr size_t kMiB = size_t{1} << 20;
const TunedParameters kDefaults{4 * kMiB, 1000us, false};

// Feeds `search` the score `score_of(current())` until it is done; returns the samples fed.
int drive(AutotuneSearch& search, const std::function<double(const TunedParameters&)>& score_of) {
  int fed = 0;
  while (!search.done() && fed < 1000) {
    search.record(score_of(search.current()));
    ++fed;
  }
  return fed;
}

}  // namespace

TEST_CASE("autotune search: the noise guard keeps the defaults when nothing is clearly better",
          "[autotune]") {
  AutotuneSearch search(kDefaults, true, {2, 3, 0.05});
  // Every candidate scores up to 4% above the defaults: within the 5% margin.
  const int fed =
      drive(search, [](const TunedParameters& p) { return p == kDefaults ? 100.0 : 104.0; });
  CHECK(search.done());
  CHECK(search.best() == kDefaults);
  CHECK(search.current() == kDefaults);
  // 2 warmup + 3 samples x (defaults + 6 fusion + 4 cycle + 1 hierarchical candidates).
  CHECK(fed == 2 + 3 * 12);
}

TEST_CASE("autotune search: clearly better values win, dimension by dimension", "[autotune]") {
  AutotuneSearch search(kDefaults, false, {1, 3, 0.05});
  const int fed = drive(search, [](const TunedParameters& p) {
    double score = 100;
    if (p.fusion_threshold == 16 * kMiB) score *= 1.5;
    if (p.cycle_time == 5000us) score *= 1.2;
    if (p.hierarchical) score *= 10;  // not available: never tried
    return score;
  });
  CHECK(fed == 1 + 3 * 11);
  CHECK(search.best() == TunedParameters{16 * kMiB, 5000us, false});
  CHECK(search.best_score() == Approx(180));
  CHECK(search.default_score() == Approx(100));
}

TEST_CASE("autotune search: warmup samples are discarded and a candidate's score is the median",
          "[autotune]") {
  AutotuneSearch search(kDefaults, false, {2, 3, 0.05});
  CHECK(search.record(1e9) == AutotuneSearch::Kind::kWarmup);  // start-up outliers
  CHECK(search.record(1e9) == AutotuneSearch::Kind::kWarmup);
  int sample = 0;
  // One outlier sample per candidate (the first) must not decide: the median ignores it.
  drive(search, [&](const TunedParameters& p) {
    const bool first = sample++ % 3 == 0;
    if (p.fusion_threshold == 64 * kMiB && first) return 1000.0;
    return p.fusion_threshold == 8 * kMiB ? 150.0 : 100.0;
  });
  CHECK(search.best().fusion_threshold == 8 * kMiB);
  CHECK(median({3, 1, 2}) == 2);
  CHECK(median({4, 1, 2, 3}) == 2.5);
}

TEST_CASE("autotune knobs parse and are checked", "[autotune]") {
  Config config = Config::load({{"RUNRUN_AUTOTUNE", "1"},
                                {"RUNRUN_AUTOTUNE_LOG", "/tmp/x.csv"},
                                {"RUNRUN_AUTOTUNE_WARMUP_SAMPLES", "0"},
                                {"RUNRUN_AUTOTUNE_STEPS_PER_SAMPLE", "4"},
                                {"RUNRUN_AUTOTUNE_SAMPLES_PER_CANDIDATE", "5"},
                                {"RUNRUN_AUTOTUNE_MARGIN", "0.1"}});
  CHECK(config.autotune.enabled);
  CHECK(config.autotune.log_path == "/tmp/x.csv");
  CHECK(config.autotune.warmup_samples == 0);
  CHECK(config.autotune.steps_per_sample == 4);
  CHECK(config.autotune.samples_per_candidate == 5);
  CHECK(config.autotune.margin == Approx(0.1));
  CHECK_FALSE(Config::load().autotune.enabled);
  CHECK_THROWS_AS(Config::load({{"RUNRUN_AUTOTUNE_STEPS_PER_SAMPLE", "0"}}), InvalidArgumentError);
  CHECK_THROWS_AS(Config::load({{"RUNRUN_AUTOTUNE", "yes"}}), InvalidArgumentError);
}

namespace {

struct TunerRun {
  std::vector<std::vector<std::pair<uint64_t, TunedParameters>>> changes;  // by rank
  std::vector<TunedParameters> frozen;                                     // by rank
  std::vector<bool> is_frozen;
};

// `size` ranks as threads, each an Autotuner over the local control channel, fed `rounds`
// rounds of 1 MiB of agreed work. The scoring clock of rank r advances by cost(r, setting in
// effect) per round: the test decides every sample's elapsed time.
TunerRun run_tuners(int size, int rounds, const Config::Autotune& options,
                    const std::function<int64_t(int, const TunedParameters&)>& cost_us) {
  auto world = std::make_shared<LocalWorld>(size);
  TunerRun result;
  result.changes.resize(static_cast<size_t>(size));
  result.frozen.resize(static_cast<size_t>(size));
  result.is_frozen.resize(static_cast<size_t>(size));
  std::mutex mutex;
  std::string failure;
  std::vector<std::thread> threads;
  for (int rank = 0; rank < size; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        LocalBackend backend(world, rank);
        std::chrono::nanoseconds now{0};
        Autotuner tuner(backend.control(), rank, options, kDefaults, false,
                        make_rank_logger(rank, size, "warn"), [&now] { return now; });
        Response work;
        work.op = OpType::kAllreduce;
        work.name = "w";
        work.dtype = DataType::kFloat32;
        work.shape = {256 * 1024};
        for (int i = 0; i < rounds; ++i) {
          now += std::chrono::microseconds(cost_us(rank, tuner.current()));
          tuner.after_round(std::vector<Response>{work});
          tuner.after_round({});  // rounds that agreed nothing do not count
        }
        std::lock_guard<std::mutex> lock(mutex);
        result.changes[static_cast<size_t>(rank)] = tuner.changes();
        result.frozen[static_cast<size_t>(rank)] = tuner.current();
        result.is_frozen[static_cast<size_t>(rank)] = tuner.frozen();
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(mutex);
        failure = "rank " + std::to_string(rank) + ": " + e.what();
        world->fail_rank(rank);
      }
    });
  }
  for (auto& t : threads) t.join();
  if (!failure.empty()) FAIL(failure);
  return result;
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

TEST_CASE("autotuner: every rank switches at the same round and freezes the same values",
          "[autotune]") {
  Config::Autotune options;
  options.enabled = true;
  options.warmup_samples = 1;
  options.steps_per_sample = 3;
  options.samples_per_candidate = 3;
  // Rank 2 is the slowest and the only one that is faster with 32 MiB and 2.5 ms: the score is
  // the slowest rank's, so that is what every rank must choose.
  auto cost = [](int rank, const TunedParameters& p) -> int64_t {
    if (rank != 2) return 100;
    int64_t us = 1000;
    if (p.fusion_threshold == 32 * kMiB) us = 700;
    if (p.cycle_time == 2500us) us = us * 8 / 10;
    return us;
  };
  // 1 warmup + 3 x 11 samples of 3 rounds = 102 rounds, then frozen.
  TunerRun run = run_tuners(3, 150, options, cost);
  const TunedParameters expected{32 * kMiB, 2500us, false};
  for (int rank = 0; rank < 3; ++rank) {
    INFO("rank " << rank);
    CHECK(run.is_frozen[static_cast<size_t>(rank)]);
    CHECK(run.frozen[static_cast<size_t>(rank)] == expected);
    CHECK(run.changes[static_cast<size_t>(rank)] == run.changes[0]);
  }
  // Defaults, then each candidate in turn (switching back to the incumbent between dimensions).
  REQUIRE(run.changes[0].size() >= 11);
  CHECK(run.changes[0].front() == std::make_pair(uint64_t{0}, kDefaults));
  // 1 warmup sample and the defaults' 3 samples: 12 rounds, then the first candidate.
  CHECK(run.changes[0][1] == std::make_pair(uint64_t{12}, TunedParameters{kMiB, 1000us, false}));
  CHECK(run.changes[0][2].first == 12 + 9);
}

TEST_CASE("autotuner: with candidates no better than the noise margin the defaults stay",
          "[autotune]") {
  Config::Autotune options;
  options.warmup_samples = 0;
  options.steps_per_sample = 2;
  options.samples_per_candidate = 1;
  options.margin = 0.05;
  // Candidates are up to ~4% faster than the defaults (and ranks disagree slightly).
  auto cost = [](int rank, const TunedParameters& p) -> int64_t {
    return (p == kDefaults ? 1000 : 962) + rank;
  };
  TunerRun run = run_tuners(2, 40, options, cost);
  for (int rank = 0; rank < 2; ++rank) {
    CHECK(run.is_frozen[static_cast<size_t>(rank)]);
    CHECK(run.frozen[static_cast<size_t>(rank)] == kDefaults);
  }
  CHECK(run.changes[1] == run.changes[0]);
  CHECK(run.changes[0].back() == std::make_pair(uint64_t{22}, kDefaults));  // back at defaults
}

TEST_CASE("autotuner: rank 0 logs every sample and the frozen values as CSV", "[autotune]") {
  const std::string path = "autotune_test_log.csv";
  std::remove(path.c_str());
  Config::Autotune options;
  options.log_path = path;
  options.warmup_samples = 2;
  options.steps_per_sample = 1;
  options.samples_per_candidate = 2;
  auto cost = [](int, const TunedParameters& p) -> int64_t {
    return p.fusion_threshold == 8 * kMiB ? 500 : 1000;
  };
  run_tuners(2, 40, options, cost);
  const auto lines = lines_of(path);
  // Header, 2 warmup rows, 2 x 11 sample rows, the final row.
  REQUIRE(lines.size() == 1 + 2 + 22 + 1);
  CHECK(lines[0] == AutotuneLog::header());
  // Sample 1: warmup, after round 1, defaults, 1 MiB of work in 1 ms.
  CHECK(lines[1] == "1,warmup,1,4194304,1,0,1048576,0.001,1.04858e+09");
  CHECK(lines[3] == "3,sample,3,4194304,1,0,1048576,0.001,1.04858e+09");
  CHECK(lines[5].rfind("5,sample,5,1048576,1,0,", 0) == 0);      // the first candidate
  CHECK(lines[24].rfind("24,sample,24,8388608,10,0,", 0) == 0);  // the last: 8 MiB kept
  CHECK(lines[25] == "25,final,24,8388608,1,0,0,0,2.09715e+09");
  std::remove(path.c_str());
}

namespace {

// `size` ranks as threads, each a Runtime with RUNRUN_AUTOTUNE=1 over `make(rank)`; every rank
// runs `steps` steps of allreduces of varied sizes (some above the 1-2 MiB fusion candidates,
// so the fusion plans change with the tuned threshold) and checks every result exactly. Returns
// every rank's autotuner changes.
std::vector<std::vector<std::pair<uint64_t, TunedParameters>>> tune_runtime(
    int size, int steps, const std::function<std::unique_ptr<Backend>(int)>& make) {
  std::vector<std::vector<std::pair<uint64_t, TunedParameters>>> changes(static_cast<size_t>(size));
  std::vector<std::string> failures(static_cast<size_t>(size));
  std::vector<std::thread> threads;
  const std::map<std::string, std::string> overrides = {
      {"RUNRUN_AUTOTUNE", "1"},
      {"RUNRUN_AUTOTUNE_WARMUP_SAMPLES", "1"},
      {"RUNRUN_AUTOTUNE_STEPS_PER_SAMPLE", "2"},
      {"RUNRUN_AUTOTUNE_SAMPLES_PER_CANDIDATE", "1"}};
  const std::vector<int64_t> sizes = {1000, 300000, 70000, 5, 150000, 33, 270000};
  for (int rank = 0; rank < size; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        Runtime runtime(make(rank), Config::load(overrides));
        for (int step = 0; step < steps; ++step) {
          std::vector<std::vector<int32_t>> data;
          std::vector<std::shared_ptr<Handle>> handles;
          for (size_t t = 0; t < sizes.size(); ++t) {
            data.emplace_back(static_cast<size_t>(sizes[t]));
            auto& v = data.back();
            for (size_t i = 0; i < v.size(); ++i) {
              v[i] = static_cast<int32_t>((i % 97) * (rank + 1) + step + static_cast<int>(t));
            }
          }
          AllreduceOptions sum;
          sum.op = ReduceOp::kSum;
          for (size_t t = 0; t < sizes.size(); ++t) {
            TensorView view{data[t].data(), DataType::kInt32, {sizes[t]}};
            handles.push_back(runtime.allreduce(
                "s" + std::to_string(step) + "." + std::to_string(t), view, view, sum));
          }
          for (auto& handle : handles) require_ok(*handle);
          const int64_t rank_sum = static_cast<int64_t>(size) * (size + 1) / 2;
          for (size_t t = 0; t < sizes.size(); ++t) {
            for (size_t i = 0; i < data[t].size(); ++i) {
              const int64_t want = static_cast<int64_t>(i % 97) * rank_sum +
                                   static_cast<int64_t>(size) * (step + static_cast<int>(t));
              RANK_CHECK(data[t][i] == want);
            }
          }
        }
        const Autotuner* tuner = runtime.worker(0).autotuner();
        RANK_CHECK(tuner != nullptr);
        RANK_CHECK(tuner->frozen());
        changes[static_cast<size_t>(rank)] = tuner->changes();
        runtime.shutdown();
      } catch (const std::exception& e) {
        failures[static_cast<size_t>(rank)] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int rank = 0; rank < size; ++rank) {
    INFO("rank " << rank);
    CHECK(failures[static_cast<size_t>(rank)].empty());
  }
  return changes;
}

}  // namespace

TEST_CASE("autotune in a runtime: results stay exact while the fusion threshold switches",
          "[autotune]") {
  auto world = std::make_shared<LocalWorld>(3);
  // 1 warmup + 11 candidates, 2 rounds each: at most 24 rounds; every step has at least one.
  auto changes =
      tune_runtime(3, 40, [&](int rank) { return std::make_unique<LocalBackend>(world, rank); });
  REQUIRE(changes[0].size() >= 11);  // defaults, 6 fusion and 4 cycle candidates at least
  CHECK(changes[1] == changes[0]);
  CHECK(changes[2] == changes[0]);
  for (const auto& change : changes[0]) CHECK_FALSE(change.second.hierarchical);
}

TEST_CASE("autotune tries hierarchical allreduce where the hosts allow it", "[autotune]") {
  LocalWorldOptions two_hosts;
  two_hosts.ranks_per_host = 2;
  auto world = std::make_shared<LocalWorld>(4, two_hosts);
  auto changes = tune_runtime(4, 40, [&](int rank) {
    std::string why_not;
    auto backend = make_hierarchical(std::make_unique<LocalBackend>(world, rank), &why_not);
    auto* hierarchical = dynamic_cast<HierarchicalBackend*>(backend.get());
    if (hierarchical == nullptr) throw std::runtime_error("no hierarchical backend: " + why_not);
    hierarchical->set_hierarchical(false);  // as make_backend leaves it under RUNRUN_AUTOTUNE alone
    return backend;
  });
  REQUIRE(changes[0].size() >= 12);
  for (size_t rank = 1; rank < 4; ++rank) CHECK(changes[rank] == changes[0]);
  bool tried = false;
  for (const auto& change : changes[0]) tried = tried || change.second.hierarchical;
  CHECK(tried);
}

#include "core/runtime/config.h"

#include <cstdlib>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "common/errors.h"
#include "common/horovod_env.h"
#include "common/knobs.h"
#include "common/logging.h"

namespace runrun {
namespace {

class KnobReader {
 public:
  explicit KnobReader(const std::map<std::string, std::string>& overrides) : overrides_(overrides) {
    for (const auto& [name, value] : overrides) {
      bool known = false;
      for (const Knob& knob : kAllKnobs) known = known || knob.env_name == name;
      RUNRUN_ENFORCE(known, InvalidArgumentError,
                     "unknown runtime setting '" + name + "': see docs/configuration.md");
    }
  }

  std::string text(const Knob& knob) const {
    std::string name(knob.env_name);
    if (auto it = overrides_.find(name); it != overrides_.end()) return it->second;
    if (const char* value = std::getenv(name.c_str())) return value;
    if (auto value = horovod_value(name)) return *value;  // a Horovod job's environment
    return std::string(knob.default_value);
  }

  // The variable the knob's value came from, for messages: its own, or Horovod's.
  std::string source(const Knob& knob) const {
    std::string name(knob.env_name);
    if (overrides_.count(name) != 0 || std::getenv(name.c_str()) != nullptr) return name;
    for (const HorovodAlias& alias : kHorovodAliases) {
      if (alias.runrun_name == name && horovod_value(name)) {
        return std::string(alias.horovod_name) + " (read as " + name + ")";
      }
    }
    return name;
  }

  double number(const Knob& knob, double min_value) const {
    std::string value = text(knob);
    char* end = nullptr;
    double parsed = std::strtod(value.c_str(), &end);
    bool ok = !value.empty() && end && *end == '\0' && parsed >= min_value;
    RUNRUN_ENFORCE(ok, InvalidArgumentError,
                   source(knob) + "='" + value + "' is not a number >= " +
                       std::to_string(min_value) + " (" + std::string(knob.doc) + ")");
    return parsed;
  }

  // The knob's value, which must be one of `choices`.
  // A comma-separated list of CPU ids (non-negative integers); empty: none.
  std::vector<int> cpu_list(const Knob& knob) const {
    const std::string value = text(knob);
    std::vector<int> cpus;
    if (value.empty()) return cpus;
    size_t start = 0;
    while (true) {
      const size_t comma = value.find(',', start);
      const std::string item =
          value.substr(start, comma == std::string::npos ? comma : comma - start);
      char* end = nullptr;
      const long cpu = std::strtol(item.c_str(), &end, 10);
      const bool ok = !item.empty() && item[0] >= '0' && item[0] <= '9' && end && *end == '\0' &&
                      cpu <= 1 << 20;
      RUNRUN_ENFORCE(ok, InvalidArgumentError,
                     source(knob) + "='" + value + "': '" + item +
                         "' is not a CPU id; give non-negative integers separated by commas, "
                         "one per local rank (" +
                         std::string(knob.doc) + ")");
      cpus.push_back(static_cast<int>(cpu));
      if (comma == std::string::npos) return cpus;
      start = comma + 1;
    }
  }

  std::string choice(const Knob& knob, std::initializer_list<std::string_view> choices) const {
    std::string value = text(knob);
    std::string listed;
    for (std::string_view c : choices) {
      if (value == c) return value;
      listed += (listed.empty() ? "" : " or ") + std::string(c);
    }
    throw InvalidArgumentError(RUNRUN_WHERE, source(knob) + "='" + value + "' is not " + listed +
                                                 " (" + std::string(knob.doc) + ")");
  }

 private:
  const std::map<std::string, std::string>& overrides_;
};

}  // namespace

Config Config::load(const std::map<std::string, std::string>& overrides) {
  KnobReader reader(overrides);
  Config c;
  c.log_level = reader.text(knobs::kLogLevel);
  // Checked here, where the variable it came from (RUNRUN_ or Horovod's) is known.
  parse_log_level(c.log_level, reader.source(knobs::kLogLevel));
  c.backend = reader.text(knobs::kBackend);
  c.cycle_time =
      std::chrono::microseconds(static_cast<int64_t>(reader.number(knobs::kCycleTimeMs, 0) * 1000));
  c.burst_gap =
      std::chrono::microseconds(static_cast<int64_t>(reader.number(knobs::kBurstGapUs, 0)));
  c.fusion_threshold = static_cast<size_t>(reader.number(knobs::kFusionThreshold, 0));
  c.cache_capacity = static_cast<size_t>(reader.number(knobs::kCacheCapacity, 0));
  c.timeline_path = reader.text(knobs::kTimeline);
  c.timeline_mark_cycles = reader.choice(knobs::kTimelineMarkCycles, {"0", "1"}) == "1";
  c.stall_check_time =
      std::chrono::seconds(static_cast<int64_t>(reader.number(knobs::kStallCheckTime, 0)));
  c.stall_shutdown_time =
      std::chrono::seconds(static_cast<int64_t>(reader.number(knobs::kStallShutdownTime, 0)));
  c.shutdown_timeout =
      std::chrono::seconds(static_cast<int64_t>(reader.number(knobs::kShutdownTimeout, 0)));
  c.collective_timeout = std::chrono::milliseconds(
      static_cast<int64_t>(reader.number(knobs::kCollectiveTimeout, 0) * 1000));
  c.peer_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(reader.number(knobs::kPeerTimeout, 0) * 1000));
  c.join_average_by_contributors =
      reader.choice(knobs::kJoinAverage, {"set_size", "contributors"}) == "contributors";
  c.hierarchical_allreduce = reader.choice(knobs::kHierarchicalAllreduce, {"0", "1"}) == "1";
  c.gpu_operations = reader.choice(knobs::kGpuOperations, {"auto", "nccl", "staging"});
  c.hierarchical_allreduce_cross =
      reader.choice(knobs::kHierarchicalAllreduceCross, {"nccl", "staging"});
  c.autotune.enabled = reader.choice(knobs::kAutotune, {"0", "1"}) == "1";
  c.autotune.log_path = reader.text(knobs::kAutotuneLog);
  c.autotune.warmup_samples = static_cast<int>(reader.number(knobs::kAutotuneWarmupSamples, 0));
  c.autotune.steps_per_sample = static_cast<int>(reader.number(knobs::kAutotuneStepsPerSample, 1));
  c.autotune.samples_per_candidate =
      static_cast<int>(reader.number(knobs::kAutotuneSamplesPerCandidate, 1));
  c.autotune.margin = reader.number(knobs::kAutotuneMargin, 0);
  const std::string profile = reader.text(knobs::kProfile);
  c.profile = !profile.empty() && profile != "0";
  c.thread_affinity = reader.cpu_list(knobs::kThreadAffinity);
  return c;
}

}  // namespace runrun

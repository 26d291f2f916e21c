#pragma once
// Why: Horovod jobs configure the runtime with HOROVOD_* variables (in job files, shell
// profiles, `os.environ[...]` before init). A knob that has a Horovod variable of the same
// meaning reads it when its RUNRUN_ name is unset, with Horovod's values converted where they
// differ, so a Horovod job's environment keeps working unchanged. The RUNRUN_ name wins when
// both are set. The launcher forwards HOROVOD_* variables to every rank as it does RUNRUN_*.
// Thread-safety: constants and a pure function over the process environment.

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace runrun {

// How Horovod's value becomes runrun's (see horovod_value).
enum class HorovodValue { kAsIs, kSwitch, kLogLevel, kTimeline };

struct HorovodAlias {
  std::string_view runrun_name;
  std::string_view horovod_name;
  HorovodValue value = HorovodValue::kAsIs;
};

inline constexpr std::string_view kHorovodPrefix = "HOROVOD_";

inline constexpr std::array kHorovodAliases = {
    HorovodAlias{"RUNRUN_LOG_LEVEL", "HOROVOD_LOG_LEVEL", HorovodValue::kLogLevel},
    HorovodAlias{"RUNRUN_CYCLE_TIME_MS", "HOROVOD_CYCLE_TIME"},
    HorovodAlias{"RUNRUN_FUSION_THRESHOLD", "HOROVOD_FUSION_THRESHOLD"},
    HorovodAlias{"RUNRUN_CACHE_CAPACITY", "HOROVOD_CACHE_CAPACITY"},
    HorovodAlias{"RUNRUN_TIMELINE", "HOROVOD_TIMELINE", HorovodValue::kTimeline},
    HorovodAlias{"RUNRUN_TIMELINE_MARK_CYCLES", "HOROVOD_TIMELINE_MARK_CYCLES",
                 HorovodValue::kSwitch},
    HorovodAlias{"RUNRUN_STALL_CHECK_TIME", "HOROVOD_STALL_CHECK_TIME_SECONDS"},
    HorovodAlias{"RUNRUN_STALL_SHUTDOWN_TIME", "HOROVOD_STALL_SHUTDOWN_TIME_SECONDS"},
    HorovodAlias{"RUNRUN_HIERARCHICAL_ALLREDUCE", "HOROVOD_HIERARCHICAL_ALLREDUCE",
                 HorovodValue::kSwitch},
    HorovodAlias{"RUNRUN_AUTOTUNE", "HOROVOD_AUTOTUNE", HorovodValue::kSwitch},
    HorovodAlias{"RUNRUN_AUTOTUNE_LOG", "HOROVOD_AUTOTUNE_LOG"},
    HorovodAlias{"RUNRUN_AUTOTUNE_WARMUP_SAMPLES", "HOROVOD_AUTOTUNE_WARMUP_SAMPLES"},
    HorovodAlias{"RUNRUN_AUTOTUNE_STEPS_PER_SAMPLE", "HOROVOD_AUTOTUNE_STEPS_PER_SAMPLE"},
    HorovodAlias{"RUNRUN_THREAD_AFFINITY", "HOROVOD_THREAD_AFFINITY"},
};

// A Horovod log level name (TRACE, DEBUG, INFO, WARNING, ERROR, FATAL; any case) as runrun's
// (WARNING is warn, FATAL critical; the others lower-cased). Not validated: other names come
// back lower-cased. Shared by HOROVOD_LOG_LEVEL and the launcher's --log-level.
std::string horovod_log_level(std::string_view name);

// The value knob `runrun_name` takes from Horovod's variables, or nullopt when they say
// nothing. Conversions: HOROVOD_LOG_LEVEL's names (any case; WARNING is warn, FATAL critical);
// HOROVOD_TIMELINE=DYNAMIC (start it later from the script) is no file; switches
// (HOROVOD_AUTOTUNE, HOROVOD_HIERARCHICAL_ALLREDUCE, HOROVOD_STALL_CHECK_DISABLE) are on when
// strtol(value) > 0, as Horovod reads them; HOROVOD_STALL_CHECK_DISABLE on turns the stall
// check and the stall shutdown off (RUNRUN_STALL_CHECK_TIME and _SHUTDOWN_TIME 0).
std::optional<std::string> horovod_value(std::string_view runrun_name);

}  // namespace runrun

#include "common/horovod_env.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace runrun {
namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// Horovod reads its switches as strtol(value) > 0: "1" and "2" are on; "", "0" and "true" off.
bool horovod_switch(const char* value) { return std::strtol(value, nullptr, 10) > 0; }

}  // namespace

std::string horovod_log_level(std::string_view name) {
  const std::string level = lower(std::string(name));
  if (level == "warning") return "warn";
  if (level == "fatal") return "critical";
  return level;
}

std::optional<std::string> horovod_value(std::string_view runrun_name) {
  if (runrun_name == "RUNRUN_STALL_CHECK_TIME" || runrun_name == "RUNRUN_STALL_SHUTDOWN_TIME") {
    // Horovod's disabled stall check neither warns nor shuts down.
    const char* disable = std::getenv("HOROVOD_STALL_CHECK_DISABLE");
    if (disable != nullptr && horovod_switch(disable)) return "0";
  }
  for (const HorovodAlias& alias : kHorovodAliases) {
    if (alias.runrun_name != runrun_name) continue;
    const char* value = std::getenv(std::string(alias.horovod_name).c_str());
    if (value == nullptr) return std::nullopt;
    switch (alias.value) {
      case HorovodValue::kLogLevel:
        return horovod_log_level(value);
      case HorovodValue::kTimeline:
        return std::string_view(value) == "DYNAMIC" ? "" : std::string(value);
      case HorovodValue::kSwitch:
        return horovod_switch(value) ? "1" : "0";
      case HorovodValue::kAsIs:
        break;
    }
    return std::string(value);
  }
  return std::nullopt;
}

}  // namespace runrun

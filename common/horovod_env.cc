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

bool truthy(const char* value) {
  const std::string text = lower(value);
  return !text.empty() && text != "0" && text != "false" && text != "no" && text != "off";
}

}  // namespace

std::optional<std::string> horovod_value(std::string_view runrun_name) {
  if (runrun_name == "RUNRUN_STALL_CHECK_TIME") {
    const char* disable = std::getenv("HOROVOD_STALL_CHECK_DISABLE");
    if (disable != nullptr && truthy(disable)) return "0";
  }
  for (const HorovodAlias& alias : kHorovodAliases) {
    if (alias.runrun_name != runrun_name) continue;
    const char* value = std::getenv(std::string(alias.horovod_name).c_str());
    if (value == nullptr) return std::nullopt;
    if (runrun_name == "RUNRUN_LOG_LEVEL") {
      const std::string level = lower(value);
      if (level == "warning") return "warn";
      if (level == "fatal") return "critical";
      return level;
    }
    if (runrun_name == "RUNRUN_TIMELINE" && std::string_view(value) == "DYNAMIC") return "";
    return std::string(value);
  }
  return std::nullopt;
}

}  // namespace runrun

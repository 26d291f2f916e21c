#include "launcher/remote/environment.h"

#include <unistd.h>

#include <cstring>

#include "common/errors.h"

namespace runrun::launcher {

Environment current_environment() {
  Environment env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const char* equals = std::strchr(*entry, '=');
    if (equals == nullptr) continue;
    env.emplace(std::string(*entry, static_cast<std::size_t>(equals - *entry)),
                std::string(equals + 1));
  }
  return env;
}

int timeout_from_environment(const Environment& env, const char* runrun_name,
                             const char* horovod_name, int default_s, const char* flag) {
  for (const char* name : {runrun_name, horovod_name}) {
    const auto it = env.find(name);
    if (it == env.end()) continue;
    const std::string& text = it->second;
    const bool digits = !text.empty() && text.size() <= 9 &&
                        text.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || std::stoi(text) < 1) {
      throw InvalidArgumentError(
          RUNRUN_WHERE, std::string(name) + "='" + text +
                            "' is not a whole number of seconds >= 1 "
                            "(read because " +
                            flag + " is not given: fix or unset it, or give " + flag + ")");
    }
    return std::stoi(text);
  }
  return default_s;
}

}  // namespace runrun::launcher

#include "launcher/environment.h"

#include <unistd.h>

#include <cstring>

namespace runrun::launcher {

Environment current_environment() {
  Environment env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const char* equals = std::strchr(*entry, '=');
    if (equals == nullptr) continue;
    env.emplace(std::string(*entry, static_cast<std::size_t>(equals - *entry)), std::string(equals + 1));
  }
  return env;
}

}  // namespace runrun::launcher

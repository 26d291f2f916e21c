#include "launcher/options/peer_timeout.h"

#include <cmath>
#include <cstdlib>
#include <string>

#include "common/knobs.h"

namespace runrun::launcher {

double peer_timeout_seconds(const char* text) {
  const std::string fallback(knobs::kPeerTimeout.default_value);
  const double default_seconds = std::strtod(fallback.c_str(), nullptr);
  if (text == nullptr || *text == '\0') return default_seconds;
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  if (end == text || *end != '\0' || !std::isfinite(seconds) || seconds < 0 || seconds > 1e6) {
    return default_seconds;
  }
  return seconds;
}

}  // namespace runrun::launcher

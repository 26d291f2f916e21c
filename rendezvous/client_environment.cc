#include "rendezvous/client_environment.h"

#include <charconv>
#include <algorithm>
#include <cstdlib>
#include <mutex>

#include "common/env_names.h"
#include "common/errors.h"
#include "common/knobs.h"

namespace runrun::rendezvous {
namespace {

std::string required(const char* name) {
  const char* value = std::getenv(name);
  RUNRUN_ENFORCE(value != nullptr && *value != '\0', InvalidArgumentError,
                 std::string(name) +
                     " is not set: this process was not started by the runrun "
                     "launcher in a mode with a rendezvous server (runrun --gloo)");
  return value;
}

uint16_t parse_port(const std::string& text) {
  unsigned value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  RUNRUN_ENFORCE(
      ec == std::errc() && end == text.data() + text.size() && value > 0 && value <= 65535,
      InvalidArgumentError,
      std::string(env::kRendezvousPort) + "='" + text + "' is not a TCP port (1-65535)");
  return static_cast<uint16_t>(value);
}

std::chrono::milliseconds timeout_knob() {
  const std::string name(knobs::kRendezvousTimeout.env_name);
  const char* text = std::getenv(name.c_str());
  const std::string value = text ? text : std::string(knobs::kRendezvousTimeout.default_value);
  char* end = nullptr;
  const double seconds = std::strtod(value.c_str(), &end);
  RUNRUN_ENFORCE(
      !value.empty() && end == value.c_str() + value.size() && seconds > 0 && seconds < 1e7,
      InvalidArgumentError, name + "='" + value + "' is not a positive number of seconds");
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

}  // namespace

JobSecret job_secret_of_this_process() {
  static std::mutex mutex;
  static JobSecret secret;
  static bool read = false;
  std::lock_guard<std::mutex> lock(mutex);
  if (!read) {
    if (const char* text = std::getenv(env::kRendezvousSecret)) {
      // Malformed: an error now and at every later init(), never a silent "no secret".
      secret = JobSecret::from_hex(text, env::kRendezvousSecret);
      ::unsetenv(env::kRendezvousSecret);
    }
    read = true;
  }
  return secret;
}

std::vector<std::pair<std::string, std::string>> rank_environment(const std::string& address,
                                                                  uint16_t port,
                                                                  const JobSecret& secret) {
  return {{env::kRendezvousAddr, address},
          {env::kRendezvousPort, std::to_string(port)},
          {env::kRendezvousSecret, secret.hex()}};
}

ClientOptions client_options_from_environment() {
  ClientOptions options;
  options.host = required(env::kRendezvousAddr);
  options.port = parse_port(required(env::kRendezvousPort));
  options.connect_timeout = timeout_knob();
  options.request_timeout = options.connect_timeout;
  if (const char* rank = std::getenv(env::kRank)) options.who = std::string("rank ") + rank;
  options.secret = job_secret_of_this_process();
  return options;
}

ClientOptions client_options_for_direct_launch(const LaunchPlan& plan) {
  ClientOptions options;
  options.host = plan.rendezvous_host;
  options.port = plan.rendezvous_port;
  options.connect_timeout = timeout_knob();
  options.request_timeout = options.connect_timeout;
  options.who = "rank " + std::to_string(plan.rank);
  options.secret = direct_launch_secret(plan, job_secret_of_this_process());
  return options;
}

}  // namespace runrun::rendezvous

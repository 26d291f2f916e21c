#include "launcher/options/profile_options.h"

#include "common/env_names.h"
#include "common/errors.h"

namespace runrun::launcher {

void add_profile_flags(CLI::App& app, ProfileFlags& flags) {
  app.add_flag("--profile", flags.profile,
               "time every optimizer step (compute, communication, hidden, exposed wait, "
               "optimizer, busbw); rank 0 prints a table at the end (RUNRUN_PROFILE=1)");
  app.add_option("--profile-interval", flags.interval,
                 "with --profile: also print the table every N steps");
  app.add_option("--profile-output", flags.output,
                 "with --profile: rank 0 writes every step and table as JSON lines to FILE");
}

std::vector<std::pair<std::string, std::string>> profile_variables(const ProfileFlags& flags) {
  const auto invalid = [](const std::string& message) {
    throw InvalidArgumentError(RUNRUN_WHERE, message);
  };
  if (!flags.profile) {
    if (!flags.interval.empty() || !flags.output.empty()) {
      invalid(std::string(flags.interval.empty() ? "--profile-output" : "--profile-interval") +
              " applies to --profile: add it");
    }
    return {};
  }
  std::vector<std::pair<std::string, std::string>> variables{{env::kProfile, "1"}};
  if (!flags.interval.empty()) {
    const bool digits = flags.interval.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || flags.interval.size() > 9 || std::stol(flags.interval) < 1) {
      invalid("--profile-interval must be a whole number of steps >= 1, got '" + flags.interval +
              "'");
    }
    variables.emplace_back(env::kProfileInterval, flags.interval);
  }
  if (!flags.output.empty()) variables.emplace_back(env::kProfileOutput, flags.output);
  return variables;
}

}  // namespace runrun::launcher

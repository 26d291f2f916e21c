#pragma once
// Why: the flags of `runrun --profile` (--profile, --profile-interval, --profile-output) are
// declared and validated in one place and become the ranks' RUNRUN_PROFILE* variables
// (docs/profiling.md); the Python side (runrun.common.profile) does the profiling.
// Thread-safety: plain functions.

#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

namespace runrun::launcher {

struct ProfileFlags {
  bool profile = false;
  std::string interval;  // steps, as written
  std::string output;    // JSON lines file of rank 0
};

void add_profile_flags(CLI::App& app, ProfileFlags& flags);

// The variables the ranks get, e.g. {RUNRUN_PROFILE, 1}, {RUNRUN_PROFILE_INTERVAL, 100}; empty
// without --profile. Throws InvalidArgumentError for a bad interval, or --profile-interval /
// --profile-output without --profile.
std::vector<std::pair<std::string, std::string>> profile_variables(const ProfileFlags& flags);

}  // namespace runrun::launcher

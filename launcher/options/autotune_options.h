#pragma once
// Why: the flags of `runrun --autotune` (--autotune, --autotune-log-file,
// --autotune-warmup-samples, --autotune-steps-per-sample; horovodrun's --no-autotune and its
// Bayesian optimization settings, which runrun's search does not have) are declared and validated
// in one place and become the ranks' RUNRUN_AUTOTUNE* knobs (docs/profiling.md, "Autotuning"); the
// runtime does the tuning (core/autotune/autotuner.h).
// Thread-safety: plain functions.

#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

namespace runrun::launcher {

struct AutotuneFlags {
  bool autotune = false;
  bool no_autotune = false;  // horovodrun's --no-autotune: RUNRUN_AUTOTUNE=0
  std::string log_file;
  std::string warmup_samples;    // as written
  std::string steps_per_sample;  // as written
  // horovodrun's Bayesian optimization settings: checked, then ignored (runrun's search is a
  // coordinate search; docs/profiling.md).
  std::string bayes_opt_max_samples, gaussian_process_noise;
};

void add_autotune_flags(CLI::App& app, AutotuneFlags& flags);

// The knobs the ranks get, e.g. {RUNRUN_AUTOTUNE, 1}, {RUNRUN_AUTOTUNE_LOG, FILE}; empty without
// any autotune flag (each of them implies --autotune). Throws InvalidArgumentError for a sample
// count that is not a whole number (>= 0 warmup samples, >= 1 steps per sample).
std::vector<std::pair<std::string, std::string>> autotune_variables(const AutotuneFlags& flags);

// One line per horovodrun autotune flag accepted and ignored (the Bayesian optimization ones).
// Throws InvalidArgumentError for a value horovodrun would reject (samples < 0, noise outside
// [0, 1]).
std::vector<std::string> autotune_notices(const AutotuneFlags& flags);

}  // namespace runrun::launcher

#include "launcher/options/autotune_options.h"

#include <charconv>

#include "common/errors.h"
#include "common/knobs.h"

namespace runrun::launcher {
namespace {

// `text` unchanged when it is a whole number >= minimum.
std::string whole_number_at_least(const std::string& text, const char* option, int minimum) {
  double value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  const bool digits = text.find_first_not_of("0123456789") == std::string::npos;
  if (text.empty() || ec != std::errc() || ptr != end || !digits || value < minimum) {
    throw InvalidArgumentError(RUNRUN_WHERE, std::string(option) + " must be an integer >= " +
                                                 std::to_string(minimum) + ", got '" + text + "'");
  }
  return text;
}

}  // namespace

void add_autotune_flags(CLI::App& app, AutotuneFlags& flags) {
  app.add_flag("--autotune", flags.autotune,
               "search fusion threshold, cycle time and hierarchical allreduce during the first "
               "steps, then freeze them (RUNRUN_AUTOTUNE=1)");
  app.add_option("--autotune-log-file", flags.log_file,
                 "rank 0 writes every autotune sample and the frozen values to this CSV file "
                 "(implies --autotune)");
  app.add_option("--autotune-warmup-samples", flags.warmup_samples,
                 "autotune samples discarded at the start (default 3)");
  app.add_option("--autotune-steps-per-sample", flags.steps_per_sample,
                 "rounds with work per autotune sample (default 10)");
  app.add_flag("--no-autotune", flags.no_autotune, "no autotuning (RUNRUN_AUTOTUNE=0)");
  app.add_option("--autotune-bayes-opt-max-samples", flags.bayes_opt_max_samples,
                 "accepted for horovodrun compatibility; runrun's autotune is no Bayesian "
                 "optimization");
  app.add_option("--autotune-gaussian-process-noise", flags.gaussian_process_noise,
                 "accepted for horovodrun compatibility; runrun's autotune is no Bayesian "
                 "optimization");
}

std::vector<std::pair<std::string, std::string>> autotune_variables(const AutotuneFlags& flags) {
  std::vector<std::pair<std::string, std::string>> variables;
  const auto set = [&](const Knob& knob, const std::string& value) {
    variables.emplace_back(std::string(knob.env_name), value);
  };
  // Any autotune option implies --autotune (it would do nothing otherwise).
  const bool implied =
      !flags.log_file.empty() || !flags.warmup_samples.empty() || !flags.steps_per_sample.empty();
  if (flags.no_autotune && (flags.autotune || implied)) {
    throw InvalidArgumentError(RUNRUN_WHERE,
                               std::string("--no-autotune and ") +
                                   (flags.autotune ? "--autotune"
                                                   : "an autotune "
                                                     "setting (which implies --autotune)") +
                                   " both given: use one");
  }
  if (flags.autotune || implied) set(knobs::kAutotune, "1");
  if (flags.no_autotune) set(knobs::kAutotune, "0");
  if (!flags.log_file.empty()) set(knobs::kAutotuneLog, flags.log_file);
  if (!flags.warmup_samples.empty()) {
    set(knobs::kAutotuneWarmupSamples,
        whole_number_at_least(flags.warmup_samples, "--autotune-warmup-samples", 0));
  }
  if (!flags.steps_per_sample.empty()) {
    set(knobs::kAutotuneStepsPerSample,
        whole_number_at_least(flags.steps_per_sample, "--autotune-steps-per-sample", 1));
  }
  return variables;
}

std::vector<std::string> autotune_notices(const AutotuneFlags& flags) {
  std::vector<std::string> notices;
  const std::string ignored =
      " accepted for horovodrun compatibility and ignored: runrun's autotune is a coordinate "
      "search, not Bayesian optimization (RUNRUN_AUTOTUNE_SAMPLES_PER_CANDIDATE and "
      "RUNRUN_AUTOTUNE_MARGIN steer it; docs/profiling.md)";
  if (!flags.bayes_opt_max_samples.empty()) {
    whole_number_at_least(flags.bayes_opt_max_samples, "--autotune-bayes-opt-max-samples", 0);
    notices.push_back("--autotune-bayes-opt-max-samples" + ignored);
  }
  if (!flags.gaussian_process_noise.empty()) {
    const std::string& text = flags.gaussian_process_noise;
    double noise = -1;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), noise);
    if (ec != std::errc() || ptr != text.data() + text.size() || !(noise >= 0 && noise <= 1)) {
      throw InvalidArgumentError(RUNRUN_WHERE,
                                 "--autotune-gaussian-process-noise must be a "
                                 "number in [0, 1], got '" +
                                     text + "'");
    }
    notices.push_back("--autotune-gaussian-process-noise" + ignored);
  }
  return notices;
}

}  // namespace runrun::launcher

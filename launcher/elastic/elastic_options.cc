#include "launcher/elastic/elastic_options.h"

#include <climits>

#include "common/errors.h"

namespace runrun::launcher {

ElasticOptions validate_elastic(int num_proc, int min_np, int max_np,
                                const std::string& discovery_script, int elastic_timeout_s,
                                int reset_limit, int static_slots) {
  const auto invalid = [](const std::string& message) {
    throw InvalidArgumentError(RUNRUN_WHERE, message);
  };
  if (num_proc < 0 || min_np < 0 || max_np < 0) invalid("-np, --min-np and --max-np must be >= 1");
  ElasticOptions elastic;
  elastic.enabled = true;
  elastic.discovery_script = discovery_script;
  elastic.min_np = min_np != 0 ? min_np : num_proc;
  if (elastic.min_np == 0) invalid("elastic training needs --min-np N (or -np N)");
  elastic.initial_np = num_proc != 0 ? num_proc : elastic.min_np;
  elastic.max_np = max_np != 0 ? max_np : (static_slots > 0 ? static_slots : INT_MAX);
  if (elastic.min_np > elastic.initial_np) {
    invalid("--min-np " + std::to_string(elastic.min_np) + " is above -np " +
            std::to_string(elastic.initial_np) + ": the job would start below its minimum");
  }
  if (elastic.initial_np > elastic.max_np) {
    invalid("-np " + std::to_string(elastic.initial_np) + " is above --max-np " +
            std::to_string(elastic.max_np) + " (the slots of the hosts, without --max-np)");
  }
  if (elastic_timeout_s < 1) {
    invalid("--elastic-timeout must be at least 1 second, got " +
            std::to_string(elastic_timeout_s));
  }
  elastic.elastic_timeout_s = elastic_timeout_s;
  if (reset_limit < -1) invalid("--reset-limit must be >= 0, got " + std::to_string(reset_limit));
  elastic.reset_limit = reset_limit;
  return elastic;
}

void apply_cooldown_range(const std::vector<int>& range, ElasticOptions& elastic) {
  if (range.empty()) return;
  if (range.size() != 2 || range[0] < 1 || range[1] < range[0]) {
    std::string given;
    for (int value : range) given += " " + std::to_string(value);
    throw InvalidArgumentError(RUNRUN_WHERE,
                               "--blacklist-cooldown-range takes two numbers of "
                               "seconds MIN MAX with 1 <= MIN <= MAX, got" +
                                   given);
  }
  elastic.cooldown_min_s = range[0];
  elastic.cooldown_max_s = range[1];
}

}  // namespace runrun::launcher

#pragma once
// Why: the elastic flags (--min-np, --max-np, --host-discovery-script, --elastic-timeout,
// --reset-limit, --blacklist-cooldown-range; Horovod's names) are checked together, once, so
// the driver works on values that make sense: 1 <= min-np <= initial -np <= max-np. Errors say
// which flag to change.
// Thread-safety: pure function.

#include <string>
#include <vector>

#include "launcher/options/launch_options.h"

namespace runrun::launcher {

// `num_proc`, `min_np`, `max_np`: 0 when not given. `static_slots`: the slots of -H/--hostfile
// (0 with a discovery script), the default and the bound of max-np without a script. Throws
// InvalidArgumentError.
ElasticOptions validate_elastic(int num_proc, int min_np, int max_np,
                                const std::string& discovery_script, int elastic_timeout_s,
                                int reset_limit, int static_slots);

// --blacklist-cooldown-range MIN MAX (Horovod's flag; empty: the defaults 10 600) into
// `elastic`: 1 <= MIN <= MAX. Throws InvalidArgumentError.
void apply_cooldown_range(const std::vector<int>& range, ElasticOptions& elastic);

}  // namespace runrun::launcher

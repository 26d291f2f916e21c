#pragma once
// Why: Slurm describes a job's nodes and tasks in compressed lists (SLURM_JOB_NODELIST
// "gpu[01-04,07],cpu3", SLURM_TASKS_PER_NODE "2(x3),1"). The launcher expands an allocation's
// lists into its hosts and slots, and a rank started by `srun` finds the step's first node (where
// rank 0 serves the rendezvous) in them: both read them here, the one way.
// Thread-safety: pure functions.

#include <string>
#include <string_view>
#include <vector>

namespace runrun::slurm {

// Expands a Slurm host list: comma-separated names, each with any number of bracketed ranges
// ("n[1-3,7]", "rack[1-2]-n[01-02]"; the width of a zero-padded bound is kept: "gpu[08-10]" is
// gpu08, gpu09, gpu10). Order as written, ranges in order. `origin` names the variable for
// errors. Throws InvalidArgumentError naming the text and what is wrong.
std::vector<std::string> expand_host_list(std::string_view text, std::string_view origin);

// Expands SLURM_TASKS_PER_NODE-style counts: "2(x3),1" is 2, 2, 2, 1. Throws
// InvalidArgumentError naming the text.
std::vector<int> expand_counts(std::string_view text, std::string_view origin);

}  // namespace runrun::slurm

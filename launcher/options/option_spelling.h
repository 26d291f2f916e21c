#pragma once
// Why: horovodrun parses its command line with Python's argparse, and users' scripts rely on
// spellings CLI11 cannot declare: single-dash long names (`-np`, `-hostfile`, `-cb`,
// `-prefix-timestamp`) and unambiguous abbreviations of long options (`--slots` for
// `--slots-per-host`). CLI11 would also read an unknown single-dash word as a cluster of short
// options (`-hostfile` as `-h` + `ostfile`: help, exit 0, nothing run). This rewrites the
// option words into the names the CLI11 app declares, before it parses, and rejects every
// single-dash word that is neither one of those names nor a short option with its value
// attached (`-Hhost:2`), so an unknown option is always an error naming it.
// Thread-safety: pure function.

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace runrun::launcher {

// `args` (argv without argv[0]) with the option words rewritten; the user's command (from the
// first word that is neither an option nor an option's value, or after `--`) is untouched.
// Throws InvalidArgumentError for an unknown single-dash word or an ambiguous abbreviation.
std::vector<std::string> normalize_option_spellings(const std::vector<std::string>& args,
                                                    const CLI::App& app);

}  // namespace runrun::launcher

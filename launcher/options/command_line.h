#pragma once
// Why: the Horovod-compatible command line (`runrun -np 4 -H a:2,b:2 python train.py`; every
// horovodrun flag, see docs/launcher.md "horovodrun compatibility") is parsed and validated in
// one place; everything after the options is the user's command and is kept untouched. Syntax
// errors become InvalidArgumentError (exit code 2 in main).
// Thread-safety: a function of its arguments (and of --config-file's file); writes only to the
// given stream.

#include <ostream>
#include <string>
#include <vector>

#include "launcher/remote/environment.h"
#include "launcher/options/launch_options.h"

namespace runrun::launcher {

// Parses `args` (argv without argv[0]). --help and --version print to `out` and return kExit.
// `env` supplies defaults (RUNRUN_RSH_AGENT; the start and elastic timeouts from RUNRUN_* or
// HOROVOD_* variables). --config-file FILE is read (horovodrun's YAML settings). Flags accepted
// for horovodrun compatibility and ignored come back as notices. Throws InvalidArgumentError for
// a malformed command line, naming the option and the value.
ParsedCommandLine parse_command_line(const std::vector<std::string>& args, const Environment& env,
                                     std::ostream& out);

}  // namespace runrun::launcher

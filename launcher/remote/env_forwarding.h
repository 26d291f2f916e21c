#pragma once
// Why: ranks on other hosts start from a bare non-interactive shell, so the launcher forwards
// the job's environment as horovodrun does (every variable, by name: values never reach a
// command line), except what describes the launcher's own host or login and anything that
// looks like a secret; then the tunables and what the user names with -x. The rule lives
// here, once.
// Thread-safety: pure functions.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "launcher/remote/environment.h"

namespace runrun::launcher {

// True when a variable name looks like it holds a secret: it contains (ignoring case) one of
// SECRET, TOKEN, PASSWORD, PASSWD, PASSPHRASE, CREDENTIAL, PRIVATE_KEY, API_KEY, APIKEY,
// ACCESS_KEY, SESSION_KEY or AUTH.
bool looks_like_secret(std::string_view name);

// The variables passed to mpirun's -x.
struct ForwardedEnv {
  // `-x NAME`: mpirun copies the value from its own environment.
  std::vector<std::string> by_name;
  // `-x NAME=value`: tunables and user values.
  std::vector<std::pair<std::string, std::string>> with_value;
  // Set in mpirun's own environment only (secret-looking user -x NAME=value, so that the value
  // never appears on a command line); also listed in by_name.
  std::vector<std::pair<std::string, std::string>> hidden_values;
  // Secret-looking variables that were not forwarded, for --verbose.
  std::vector<std::string> withheld;
};

// Plans the forwarding: PATH, LD_LIBRARY_PATH, PYTHONPATH, PYTHONHOME, VIRTUAL_ENV,
// PYENV_VERSION (when set), then every other variable except the topology ones the shim sets,
// the launcher's own, those of this host or login (HOSTNAME, HOME, SSH_*, *CUDA_VISIBLE_DEVICES,
// OMPI_*, ...; env_forwarding.cc) and secret-looking ones (withheld), then the tunables
// (`knob_values` win over the environment), then `extra_env` (-x VAR or VAR=value; an explicit -x
// is honoured even for a secret-looking name, whose value is then passed through the environment,
// not the command line), and last RUNRUN_RANK_PATH=the ranks' PATH (a -x PATH=value, else the
// launcher's PATH; none without either). Throws InvalidArgumentError for `-x VAR` when VAR is not
// set.
ForwardedEnv plan_forwarded_env(const Environment& env,
                                const std::vector<std::pair<std::string, std::string>>& knob_values,
                                const std::vector<std::string>& extra_env);

}  // namespace runrun::launcher

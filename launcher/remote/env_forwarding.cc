#include "launcher/remote/env_forwarding.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "common/env_names.h"
#include "common/horovod_env.h"
#include "common/errors.h"

namespace runrun::launcher {
namespace {

constexpr std::array<std::string_view, 12> kSecretWords = {
    "SECRET",      "TOKEN",   "PASSWORD", "PASSWD",     "PASSPHRASE",  "CREDENTIAL",
    "PRIVATE_KEY", "API_KEY", "APIKEY",   "ACCESS_KEY", "SESSION_KEY", "AUTH"};

// What finds the user's programs, libraries and interpreter (pyenv's `pyenv shell` sets
// PYENV_VERSION; its shims read it).
constexpr std::array<std::string_view, 6> kSearchPaths = {
    "PATH", "LD_LIBRARY_PATH", "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYENV_VERSION"};

// Set per rank by the rank shim or read by the launcher only: never copied from here.
bool is_not_forwarded(const std::string& name) {
  static const std::array<std::string_view, 15> kNames = {
      env::kRank,           env::kSize,           env::kLocalRank,
      env::kLocalSize,      env::kCrossRank,      env::kCrossSize,
      env::kHostIndex,      env::kController,     env::kNetworkInterface,
      env::kRendezvousAddr, env::kRendezvousPort, env::kRendezvousSecret,
      kRshAgentEnv,         kRankPathEnv,         kStartTimeoutEnv};
  return std::find(kNames.begin(), kNames.end(), name) != kNames.end();
}

bool starts_with(const std::string& name, std::string_view prefix) {
  return name.rfind(prefix, 0) == 0;
}

// What describes the launcher's own host, login or shell rather than the job: each rank's host
// and login set their own. Horovod's exclusions (BASH_FUNC_*, OLDPWD, *CUDA_VISIBLE_DEVICES:
// which GPUs a host shows is that host's) are among them, and an MPI job's own variables
// (OMPI_*, PMIX_*: mpirun passes its settings itself; a launcher started inside an MPI job must
// not hand its rank to the ranks).
bool describes_this_host(const std::string& name) {
  static const std::array<std::string_view, 20> kNames = {
      "HOSTNAME", "HOST",      "PWD",     "OLDPWD", "SHLVL",      "_",
      "HOME",     "USER",      "LOGNAME", "SHELL",  "MAIL",       "DISPLAY",
      "TMUX",     "TMUX_PANE", "STY",     "WINDOW", "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS",
      "TERMCAP",  "PS1"};
  static const std::array<std::string_view, 6> kPrefixes = {"BASH_FUNC_", "SSH_",  "XDG_",
                                                            "OMPI_",      "PMIX_", "PRTE_"};
  if (std::find(kNames.begin(), kNames.end(), name) != kNames.end()) return true;
  if (name.size() >= 20 && name.compare(name.size() - 20, 20, "CUDA_VISIBLE_DEVICES") == 0) {
    return true;
  }
  return std::any_of(kPrefixes.begin(), kPrefixes.end(),
                     [&](std::string_view prefix) { return starts_with(name, prefix); });
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

void remove_name(ForwardedEnv* plan, const std::string& name) {
  auto& names = plan->by_name;
  names.erase(std::remove(names.begin(), names.end(), name), names.end());
  auto& values = plan->with_value;
  values.erase(std::remove_if(values.begin(), values.end(),
                              [&](const auto& entry) { return entry.first == name; }),
               values.end());
}

}  // namespace

bool looks_like_secret(std::string_view name) {
  std::string upper(name);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return std::any_of(kSecretWords.begin(), kSecretWords.end(),
                     [&](std::string_view word) { return upper.find(word) != std::string::npos; });
}

ForwardedEnv plan_forwarded_env(const Environment& env,
                                const std::vector<std::pair<std::string, std::string>>& knob_values,
                                const std::vector<std::string>& extra_env) {
  ForwardedEnv plan;
  for (std::string_view name : kSearchPaths) {
    if (env.count(std::string(name)) != 0) plan.by_name.emplace_back(name);
  }
  for (const auto& [name, value] : env) {
    if (contains(plan.by_name, name) || is_not_forwarded(name) || describes_this_host(name)) {
      continue;
    }
    if (looks_like_secret(name)) {
      plan.withheld.push_back(name);
    } else {
      plan.by_name.push_back(name);
    }
  }
  for (const auto& [name, value] : knob_values) {
    remove_name(&plan, name);
    plan.with_value.emplace_back(name, value);
  }
  for (const auto& entry : extra_env) {
    const auto equals = entry.find('=');
    const std::string name = entry.substr(0, equals);
    remove_name(&plan, name);
    plan.withheld.erase(std::remove(plan.withheld.begin(), plan.withheld.end(), name),
                        plan.withheld.end());
    if (equals == std::string::npos) {
      if (env.count(name) == 0) {
        throw InvalidArgumentError(RUNRUN_WHERE, "-x " + name + ": " + name +
                                                     " is not set in the launcher's "
                                                     "environment; set it or write -x " +
                                                     name + "=value");
      }
      plan.by_name.push_back(name);
    } else if (looks_like_secret(name)) {
      plan.hidden_values.emplace_back(name, entry.substr(equals + 1));
      if (!contains(plan.by_name, name)) plan.by_name.push_back(name);
    } else {
      plan.with_value.emplace_back(name, entry.substr(equals + 1));
    }
  }
  const auto user_path = std::find_if(plan.with_value.begin(), plan.with_value.end(),
                                      [](const auto& entry) { return entry.first == "PATH"; });
  if (user_path != plan.with_value.end()) {
    plan.with_value.emplace_back(kRankPathEnv, user_path->second);
  } else if (const auto path = env.find("PATH"); path != env.end()) {
    plan.with_value.emplace_back(kRankPathEnv, path->second);
  }
  return plan;
}

}  // namespace runrun::launcher

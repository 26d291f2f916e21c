#include <catch2/catch.hpp>

#include "common/errors.h"
#include "launcher/remote/env_forwarding.h"

using namespace runrun::launcher;
using Names = std::vector<std::string>;
using Values = std::vector<std::pair<std::string, std::string>>;

TEST_CASE("secret-looking names") {
  for (const char* name :
       {"AWS_SECRET_ACCESS_KEY", "HF_TOKEN", "github_token", "DB_PASSWORD", "MYSQL_PASSWD",
        "GPG_PASSPHRASE", "GOOGLE_APPLICATION_CREDENTIALS", "SSH_PRIVATE_KEY", "OPENAI_API_KEY",
        "WANDB_APIKEY", "AWS_ACCESS_KEY_ID", "AWS_SESSION_KEY", "RUNRUN_AUTH", "Authorization"}) {
    CHECK(looks_like_secret(name));
  }
  for (const char* name : {"PATH", "RUNRUN_FUSION_THRESHOLD", "HOME", "CUDA_VISIBLE_DEVICES",
                           "KEYBOARD", "TOKENIZERS_PARALLELISM_X"}) {
    CHECK(looks_like_secret(name) == (std::string(name).find("TOKEN") != std::string::npos));
  }
}

TEST_CASE(
    "search paths, the job's variables and tunables are forwarded; secrets, topology and "
    "this host's variables are not") {
  const Environment env = {{"PATH", "/bin"},
                           {"LD_LIBRARY_PATH", "/lib"},
                           {"PYTHONPATH", "/py"},
                           {"VIRTUAL_ENV", "/venv"},
                           {"HOME", "/root"},
                           {"RUNRUN_LOG_LEVEL", "info"},
                           {"RUNRUN_CYCLE_TIME_MS", "5"},
                           {"RUNRUN_API_TOKEN", "s3cret"},
                           {"RUNRUN_RANK", "3"},
                           {"RUNRUN_LOCAL_SIZE", "2"},
                           {"RUNRUN_RSH_AGENT", "agent"},
                           {"RUNRUN_START_TIMEOUT", "90"},
                           {"AWS_SECRET_ACCESS_KEY", "x"}};
  const auto plan = plan_forwarded_env(env, {{"RUNRUN_CYCLE_TIME_MS", "2"}}, {});
  CHECK(plan.by_name ==
        Names{"PATH", "LD_LIBRARY_PATH", "PYTHONPATH", "VIRTUAL_ENV", "RUNRUN_LOG_LEVEL"});
  CHECK(plan.with_value == Values{{"RUNRUN_CYCLE_TIME_MS", "2"}, {"RUNRUN_RANK_PATH", "/bin"}});
  CHECK(plan.withheld == Names{"AWS_SECRET_ACCESS_KEY", "RUNRUN_API_TOKEN"});
  CHECK(plan.hidden_values.empty());
}

TEST_CASE("every other variable of the job is forwarded by name, as horovodrun does") {
  // horovodrun passes -x for every variable but BASH_FUNC_*, OLDPWD, *CUDA_VISIBLE_DEVICES and
  // its secret key; runrun also keeps what names this host or login, and secret-looking names.
  const Environment env = {{"PATH", "/bin"},
                           {"NCCL_DEBUG", "INFO"},
                           {"OMP_NUM_THREADS", "4"},
                           {"KERAS_BACKEND", "jax"},
                           {"MY_APP_CONFIG", "/etc/app.yaml"},
                           {"HOROVOD_FUSION_THRESHOLD", "1024"},
                           {"CUDA_VISIBLE_DEVICES", "0,1"},
                           {"NV_CUDA_VISIBLE_DEVICES", "0"},
                           {"BASH_FUNC_module%%", "() { :; }"},
                           {"OLDPWD", "/tmp"},
                           {"PWD", "/work"},
                           {"HOSTNAME", "a"},
                           {"HOME", "/root"},
                           {"SSH_CONNECTION", "1 2 3 4"},
                           {"XDG_RUNTIME_DIR", "/run/user/0"},
                           {"OMPI_COMM_WORLD_RANK", "0"},
                           {"PMIX_RANK", "0"},
                           {"_", "/usr/bin/runrun"},
                           {"HF_TOKEN", "t"}};
  const auto plan = plan_forwarded_env(env, {}, {});
  CHECK(plan.by_name == Names{"PATH", "HOROVOD_FUSION_THRESHOLD", "KERAS_BACKEND", "MY_APP_CONFIG",
                              "NCCL_DEBUG", "OMP_NUM_THREADS"});
  CHECK(plan.withheld == Names{"HF_TOKEN"});
}

TEST_CASE("the interpreter's selection is forwarded: virtualenv, pyenv version, PYTHONHOME") {
  const auto plan = plan_forwarded_env({{"PATH", "/venv/bin:/bin"},
                                        {"VIRTUAL_ENV", "/venv"},
                                        {"PYENV_VERSION", "3.11.7"},
                                        {"PYTHONHOME", "/py"}},
                                       {}, {});
  CHECK(plan.by_name == Names{"PATH", "PYTHONHOME", "VIRTUAL_ENV", "PYENV_VERSION"});
  CHECK(plan.with_value == Values{{"RUNRUN_RANK_PATH", "/venv/bin:/bin"}});
}

TEST_CASE("the ranks' PATH for the shim: the launcher's, a -x PATH=value, a stale one replaced") {
  const Environment env = {{"PATH", "/a:/b"}, {"RUNRUN_RANK_PATH", "/stale"}};
  CHECK(plan_forwarded_env(env, {}, {}).with_value == Values{{"RUNRUN_RANK_PATH", "/a:/b"}});
  CHECK(plan_forwarded_env(env, {}, {"PATH=/c"}).with_value ==
        Values{{"PATH", "/c"}, {"RUNRUN_RANK_PATH", "/c"}});
  CHECK(plan_forwarded_env({}, {}, {}).with_value.empty());
}

TEST_CASE("unset search paths are not forwarded") {
  const auto plan = plan_forwarded_env({{"PATH", "/bin"}}, {}, {});
  CHECK(plan.by_name == Names{"PATH"});
}

TEST_CASE("user -x: by name, with a value, overriding, and secrets kept off the command line") {
  const Environment env = {
      {"PATH", "/bin"}, {"NCCL_DEBUG", "INFO"}, {"RUNRUN_X", "1"}, {"HF_TOKEN", "t"}};
  const auto plan = plan_forwarded_env(
      env, {}, {"NCCL_DEBUG", "OMP_NUM_THREADS=4", "RUNRUN_X=2", "HF_TOKEN", "MY_PASSWORD=pw"});
  CHECK(plan.by_name == Names{"PATH", "NCCL_DEBUG", "HF_TOKEN", "MY_PASSWORD"});
  CHECK(plan.with_value ==
        Values{{"OMP_NUM_THREADS", "4"}, {"RUNRUN_X", "2"}, {"RUNRUN_RANK_PATH", "/bin"}});
  CHECK(plan.hidden_values == Values{{"MY_PASSWORD", "pw"}});
}

TEST_CASE("option -x VAR for an unset VAR is an error naming it") {
  CHECK_THROWS_WITH(
      plan_forwarded_env({}, {}, {"NOT_SET_ANYWHERE"}),
      Catch::Contains("-x NOT_SET_ANYWHERE") && Catch::Contains("NOT_SET_ANYWHERE=value"));
}

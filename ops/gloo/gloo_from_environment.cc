#include "ops/gloo/gloo_from_environment.h"

#include <atomic>
#include <cstdlib>
#include <utility>

#include "common/env_names.h"
#include "common/errors.h"
#include "ops/gloo/gloo_backend.h"
#include "ops/gloo/gloo_shm_board.h"
#include "ops/gloo/rendezvous_store.h"
#include "rendezvous/client_environment.h"
#include "rendezvous/elastic_worker.h"
#include "rendezvous/launch_environment.h"
#include "rendezvous/local_address.h"
#include "rendezvous/server.h"

namespace runrun::gloo_backend {
namespace {

constexpr const char* kHowToStart =
    "; the gloo backend runs in jobs started by the launcher: `runrun --gloo -np N COMMAND`";

int required_int(const char* name) {
  const char* text = std::getenv(name);
  RUNRUN_ENFORCE(text != nullptr && *text != '\0', InvalidArgumentError,
                 std::string(name) + " is not set" + kHowToStart);
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  RUNRUN_ENFORCE(*end == '\0' && value >= 0 && value < (1L << 24), InvalidArgumentError,
                 std::string(name) + "='" + text + "' is not a rank or size" + kHowToStart);
  return static_cast<int>(value);
}

}  // namespace

std::string listen_address(const std::string& spec, const std::string& server) {
  if (spec.empty()) return rendezvous::address_towards(server);
  const std::string address = rendezvous::address_selected_by(spec);
  if (!address.empty()) return address;
  throw InvalidArgumentError(RUNRUN_WHERE, std::string(env::kNetworkInterface) + "='" + spec +
                                               "' (runrun --network-interface) selects no IPv4 "
                                               "address of this host; name an interface this "
                                               "host has, or a CIDR block its address is in");
}

namespace {

// What every rank's backend takes from `options` and the environment, whoever started it.
GlooBackendOptions gloo_options_for(const GlooEnvironmentOptions& options,
                                    std::chrono::milliseconds connect_timeout) {
  GlooBackendOptions gloo_options;
  gloo_options.logger = options.logger;
  gloo_options.collective_timeout = options.collective_timeout;
  gloo_options.shared_memory = shared_memory_from_environment();
  gloo_options.shared_memory_single_copy = single_copy_from_environment();
  gloo_options.algorithms = algorithms::collective_algorithms_from_environment();
  gloo_options.connect_timeout = connect_timeout;
  return gloo_options;
}

bool loopback(const std::string& address) { return address.rfind("127.", 0) == 0; }

// An address no packet is sent to: the kernel's route towards it is the default route, whose
// source address is the one other hosts most likely reach this host at.
constexpr const char* kDefaultRouteProbe = "192.0.2.1";  // TEST-NET-1 (RFC 5737)

// Where rank 0 of a direct launch listens: loopback for a job on one host that looks for it
// there, else every address of its host (MASTER_ADDR may name a Kubernetes service, or rank 0's
// own name, which Debian maps to 127.0.1.1).
std::string serving_address(const rendezvous::LaunchPlan& plan) {
  if (plan.several_hosts) return "0.0.0.0";
  try {
    if (loopback(rendezvous::address_towards(plan.rendezvous_host))) return "127.0.0.1";
  } catch (const InvalidArgumentError&) {
    // Unresolvable here: the clients fail with their own message naming the host.
  }
  return "0.0.0.0";
}

// The address this rank's Gloo pairs listen on: RUNRUN_NETWORK_INTERFACE's, else the one towards
// rank 0's rendezvous; when that is loopback (rank 0 itself) but the job spans hosts, the
// default route's, or an error saying to name the network.
std::string direct_listen_address(const rendezvous::LaunchPlan& plan, const char* spec) {
  const std::string address = listen_address(spec ? spec : "", plan.rendezvous_host);
  if (spec != nullptr || !plan.several_hosts || !loopback(address)) return address;
  std::string routed;
  try {
    routed = rendezvous::address_towards(kDefaultRouteProbe);
  } catch (const InvalidArgumentError&) {}
  RUNRUN_ENFORCE(!routed.empty() && !loopback(routed), InvalidArgumentError,
                 "rank " + std::to_string(plan.rank) + " reaches the rendezvous host '" +
                     plan.rendezvous_host +
                     "' over loopback and this host has no default "
                     "route, so the job's other hosts could not reach it: name the network with " +
                     env::kNetworkInterface + " (an interface or a CIDR block)");
  return routed;
}

// A rank of a job that srun or torchrun started (launch_environment.h): rank 0 serves the
// job's rendezvous on the port every rank derives, and every rank connects to it.
std::unique_ptr<Backend> make_direct_gloo_backend(const rendezvous::LaunchPlan& first_plan,
                                                  const GlooEnvironmentOptions& options) {
  // Every rank initializes runrun the same number of times (a script may shut down and init
  // again): each initialization is a job of its own (launch_environment.h).
  static std::atomic<int> initializations{0};
  const int initialization = initializations++;
  const auto plan = rendezvous::for_initialization(first_plan, initialization);
  auto client_options = rendezvous::client_options_for_direct_launch(plan);
  std::shared_ptr<rendezvous::RendezvousServer> server;
  if (plan.rank == 0) {
    rendezvous::ServerOptions server_options;
    server_options.bind_address = serving_address(plan);
    server_options.port = plan.rendezvous_port;
    server_options.logger = options.logger;
    try {
      server =
          std::make_shared<rendezvous::RendezvousServer>(client_options.secret, server_options);
    } catch (const InvalidArgumentError& error) {
      throw InvalidArgumentError(
          RUNRUN_WHERE, std::string("rank 0 cannot serve the job's rendezvous: ") + error.what() +
                            " (the port is derived from the job's identity; another process "
                            "holds it: set " +
                            env::kRendezvousPort +
                            " to a free port for "
                            "every rank of the job)");
    }
  }
  const char* spec = std::getenv(env::kNetworkInterface);
  GlooBackendOptions gloo_options = gloo_options_for(options, client_options.connect_timeout);
  gloo_options.hostname = direct_listen_address(plan, spec);
  gloo_options.host_id = plan.host_id;
  gloo_options.prefix = "runrun/gloo/direct" + std::to_string(initialization);
  const auto get_timeout = client_options.connect_timeout;
  auto client = std::make_shared<rendezvous::RendezvousClient>(std::move(client_options));
  auto store =
      std::make_shared<ops::RendezvousStore>(std::move(client), 0, get_timeout, std::move(server));
  return make_gloo_backend(std::move(store), plan.rank, plan.size, std::move(gloo_options));
}

}  // namespace

std::unique_ptr<Backend> make_gloo_backend_from_environment(const GlooEnvironmentOptions& options) {
  if (std::getenv(env::kController) == nullptr) {
    const auto plan = rendezvous::detect_launch_of_this_process();
    if (rendezvous::is_direct(plan.kind)) return make_direct_gloo_backend(plan, options);
  }
  // An elastic worker learns its rank and size of this generation from the launcher's driver.
  auto* elastic = rendezvous::ElasticWorker::of_this_process();
  const uint64_t generation = elastic != nullptr ? elastic->join().generation : 0;
  const int rank = required_int(env::kRank);
  const int size = required_int(env::kSize);
  RUNRUN_ENFORCE(rank < size, InvalidArgumentError,
                 std::string(env::kRank) + "=" + std::to_string(rank) + " is not below " +
                     env::kSize + "=" + std::to_string(size) + kHowToStart);
  auto client_options = rendezvous::client_options_from_environment();
  const char* spec = std::getenv(env::kNetworkInterface);
  GlooBackendOptions gloo_options = gloo_options_for(options, client_options.connect_timeout);
  gloo_options.hostname = listen_address(spec ? spec : "", client_options.host);
  if (const char* host_index = std::getenv(env::kHostIndex)) {
    gloo_options.host_id = std::string("host ") + host_index;
  }
  // Every rank initializes runrun the same number of times (a script may shut down and init
  // again): each initialization connects under its own store prefix.
  static std::atomic<int> initializations{0};
  gloo_options.prefix = "runrun/gloo/init" + std::to_string(initializations++);
  if (elastic != nullptr) gloo_options.prefix = "runrun/gloo/elastic";  // keys are per generation
  const auto get_timeout = client_options.connect_timeout;
  auto client = std::make_shared<rendezvous::RendezvousClient>(std::move(client_options));
  auto store = std::make_shared<ops::RendezvousStore>(std::move(client), generation, get_timeout);
  return make_gloo_backend(std::move(store), rank, size, std::move(gloo_options));
}

}  // namespace runrun::gloo_backend

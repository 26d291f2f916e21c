#pragma once
// Why: a rank started by `runrun --gloo` finds everything it needs to join the job in its
// environment (rank, size, host index, the rendezvous server and the job secret, the network to
// listen on; common/env_names.h). This turns that environment into a connected GlooBackend, so
// the generic factory needs to know nothing about Gloo, stores or addresses.
// Thread-safety: reads the environment and removes the secret from it (see
// rendezvous/client_environment.h): call it at start-up, before other threads use getenv.

#include <chrono>
#include <memory>
#include <string>

#include "common/logging.h"
#include "ops/backend.h"

namespace runrun::gloo_backend {

struct GlooEnvironmentOptions {
  Logger logger;                                    // may be null
  std::chrono::milliseconds collective_timeout{0};  // 0: none
};

// Connects this rank to every other rank of the job. Throws InvalidArgumentError naming the
// variable when the launcher's variables are missing or malformed (with what to do: run under
// `runrun --gloo`), and the errors of make_gloo_backend / the rendezvous client otherwise.
std::unique_ptr<Backend> make_gloo_backend_from_environment(const GlooEnvironmentOptions& options);

// The local address to listen on: the first address of this host inside `spec` (interface
// names or a.b.c.d/n blocks, commas) when `spec` is not empty, else the address this host uses
// to reach `server` (the rendezvous server's address). Throws InvalidArgumentError naming the
// spec when nothing matches.
std::string listen_address(const std::string& spec, const std::string& server);

}  // namespace runrun::gloo_backend

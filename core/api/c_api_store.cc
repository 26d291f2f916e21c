// The job-store part of the C API (c_api.h, "job store"): thin handles over rendezvous/'s
// RendezvousServer and RendezvousClient, for an elastic driver that is not the launcher (the Ray
// driver, runrun.ray). No logic of its own: the protocol, the secret handshake and the bounds
// are the rendezvous layer's.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "common/errors.h"
#include "core/api/c_api_last_error.h"
#include "rendezvous/client.h"
#include "rendezvous/job_secret.h"
#include "rendezvous/server.h"
#include "runrun/c_api.h"

struct runrun_store_server {
  std::unique_ptr<runrun::rendezvous::RendezvousServer> server;
};

struct runrun_store_client {
  std::unique_ptr<runrun::rendezvous::RendezvousClient> client;
};

namespace {

using runrun::capi::guarded;

void require(bool ok, const char* what) {
  if (!ok) throw runrun::InvalidArgumentError(RUNRUN_WHERE, std::string("job store: ") + what);
}

runrun::rendezvous::RendezvousClient& client_of(runrun_store_client* client) {
  require(client != nullptr && client->client != nullptr, "the client is closed");
  return *client->client;
}

std::chrono::milliseconds bound(double timeout_s) {
  require(timeout_s > 0 && timeout_s < 1e7, "the timeout must be a positive number of seconds");
  return std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
}

}  // namespace

extern "C" runrun_status runrun_store_server_start(const char* bind_address, uint16_t port,
                                                   const char* secret_hex,
                                                   runrun_store_server** out) {
  return guarded([&] {
    require(bind_address != nullptr && secret_hex != nullptr && out != nullptr,
            "runrun_store_server_start needs an address, a secret and an output");
    runrun::rendezvous::ServerOptions options;
    options.bind_address = bind_address;
    options.port = port;
    auto secret = runrun::rendezvous::JobSecret::from_hex(secret_hex, "the job store's secret");
    auto handle = std::make_unique<runrun_store_server>();
    handle->server =
        std::make_unique<runrun::rendezvous::RendezvousServer>(std::move(secret), options);
    *out = handle.release();
  });
}

extern "C" uint16_t runrun_store_server_port(const runrun_store_server* server) {
  return server != nullptr && server->server ? server->server->port() : 0;
}

extern "C" size_t runrun_store_server_refused(const runrun_store_server* server) {
  return server != nullptr && server->server ? server->server->refused_connections() : 0;
}

extern "C" void runrun_store_server_stop(runrun_store_server* server) {
  if (server == nullptr) return;
  if (server->server) server->server->stop();
  delete server;
}

extern "C" runrun_status runrun_store_client_connect(const char* host, uint16_t port,
                                                     const char* secret_hex, double timeout_s,
                                                     const char* who, runrun_store_client** out) {
  return guarded([&] {
    require(host != nullptr && secret_hex != nullptr && out != nullptr,
            "runrun_store_client_connect needs a host, a secret and an output");
    runrun::rendezvous::ClientOptions options;
    options.host = host;
    options.port = port;
    options.secret = runrun::rendezvous::JobSecret::from_hex(secret_hex, "the job store's secret");
    options.connect_timeout = bound(timeout_s);
    options.request_timeout = options.connect_timeout;
    if (who != nullptr && *who != '\0') options.who = who;
    auto handle = std::make_unique<runrun_store_client>();
    handle->client = std::make_unique<runrun::rendezvous::RendezvousClient>(std::move(options));
    *out = handle.release();
  });
}

extern "C" runrun_status runrun_store_client_set(runrun_store_client* client, uint64_t generation,
                                                 const char* key, const char* value,
                                                 size_t value_size) {
  return guarded([&] {
    require(key != nullptr && (value != nullptr || value_size == 0), "set needs a key and a value");
    client_of(client).set(generation, key, std::string(value ? value : "", value_size));
  });
}

extern "C" runrun_status runrun_store_client_get(runrun_store_client* client, uint64_t generation,
                                                 const char* key, int* found, char** value,
                                                 size_t* value_size) {
  return guarded([&] {
    require(key != nullptr && found != nullptr && value != nullptr && value_size != nullptr,
            "get needs a key and outputs");
    *found = 0;
    *value = nullptr;
    *value_size = 0;
    const auto text = client_of(client).get(generation, key);
    if (!text) return;
    char* copy = static_cast<char*>(std::malloc(text->size() + 1));
    if (copy == nullptr) throw std::bad_alloc();
    std::memcpy(copy, text->data(), text->size());
    copy[text->size()] = '\0';
    *found = 1;
    *value = copy;
    *value_size = text->size();
  });
}

extern "C" runrun_status runrun_store_client_add(runrun_store_client* client, uint64_t generation,
                                                 const char* key, int64_t delta, int64_t* result) {
  return guarded([&] {
    require(key != nullptr && result != nullptr, "add needs a key and an output");
    *result = client_of(client).add(generation, key, delta);
  });
}

extern "C" runrun_status runrun_store_client_check(runrun_store_client* client, uint64_t generation,
                                                   const char* key, int* exists) {
  return guarded([&] {
    require(key != nullptr && exists != nullptr, "check needs a key and an output");
    *exists = client_of(client).check(generation, {key}) ? 1 : 0;
  });
}

extern "C" void runrun_store_client_close(runrun_store_client* client) { delete client; }

extern "C" void runrun_store_free(char* value) { std::free(value); }

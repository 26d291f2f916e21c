// A rank program for rendezvous_refusal.sh: during a real `runrun --gloo` job, rank 0 plays an
// intruder that knows where the job's rendezvous server is (RUNRUN_RENDEZVOUS_ADDR/PORT from its
// environment) but not the secret: it connects with a wrong secret and with none, while the
// other ranks are building their mesh through that server, and once more after the mesh is up.
// Each attempt must be refused with the reason (and must not get as far as writing a key). Then
// every rank checks an allreduce over Gloo: the job is unaffected. Prints per rank
//   INTRUDER refused wrong secret: <message>     (rank 0, twice)
//   INTRUDER refused missing secret: <message>   (rank 0)
//   INTRUDER rank=R size=S backend=gloo allreduce=ok
// and exits 1 with "INTRUDER FAILED: ..." otherwise. Other arguments (--token X) are ignored.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/env_names.h"
#include "common/errors.h"
#include "core/runtime/runtime.h"
#include "ops/backend_factory.h"
#include "rendezvous/client.h"
#include "rendezvous/job_secret.h"

namespace {

using namespace runrun;

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "INTRUDER FAILED: %s\n", what.c_str());
  std::exit(1);
}

std::string env_or_die(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') die(std::string(name) + " is not set by the launcher");
  return value;
}

// Connects to the job's server with `secret` and tries to write a key the mesh reads; the
// server must refuse the connection before that, with a message containing `reason`.
void intrude(const std::string& host, uint16_t port, rendezvous::JobSecret secret,
             const char* label, const char* reason) {
  rendezvous::ClientOptions options;
  options.host = host;
  options.port = port;
  options.secret = std::move(secret);
  options.connect_timeout = std::chrono::seconds(20);
  options.request_timeout = std::chrono::seconds(20);
  options.who = "the intruder";
  try {
    rendezvous::RendezvousClient client(options);
    client.set(0, "runrun/gloo/init0/intruder", "let me in");
  } catch (const InvalidArgumentError& error) {
    const std::string message = error.what();
    if (message.find(reason) == std::string::npos) {
      die(std::string("the refusal of a ") + label + " secret does not say '" + reason +
          "': " + message);
    }
    std::printf("INTRUDER refused %s secret: %s\n", label, message.c_str());
    std::fflush(stdout);
    return;
  } catch (const std::exception& error) {
    die(std::string("a ") + label + " secret was not refused clearly: " + error.what());
  }
  die(std::string("the rendezvous server accepted a ") + label + " secret and a write");
}

void allreduce_and_check(Runtime& rt) {
  const int size = rt.topology().size;
  std::vector<float> x(1000, static_cast<float>(rt.topology().rank + 1));
  TensorView v{x.data(), DataType::kFloat32, {1000}};
  AllreduceOptions sum;
  sum.op = ReduceOp::kSum;
  auto handle = rt.allreduce("after.intruders", v, v, sum);
  if (!handle->wait(std::chrono::seconds(60))) die("the allreduce did not complete in 60 s");
  if (handle->code() != ErrorCode::kOk) die("the allreduce failed: " + handle->error());
  const float expected = static_cast<float>(size * (size + 1) / 2);
  for (float value : x) {
    if (value != expected)
      die("allreduce gave " + std::to_string(value) + ", expected " + std::to_string(expected));
  }
}

}  // namespace

int main() {
  try {
    const int rank = std::atoi(env_or_die(env::kRank).c_str());
    const std::string host = env_or_die(env::kRendezvousAddr);
    const auto port = static_cast<uint16_t>(std::atoi(env_or_die(env::kRendezvousPort).c_str()));
    // Before this rank joins: the other ranks are connecting through the server meanwhile.
    if (rank == 0) {
      intrude(host, port, rendezvous::JobSecret::generate(), "wrong", "wrong job secret");
      intrude(host, port, rendezvous::JobSecret(), "missing", "no job secret presented");
    }
    const Config config = Config::load();
    BackendOptions backend;
    backend.name = config.backend;
    Runtime rt(make_backend(backend), config);
    if (rt.backend_name() != "gloo") die("the job runs " + std::string(rt.backend_name()));
    if (rank == 0) {  // with the mesh up and the job running
      intrude(host, port, rendezvous::JobSecret::generate(), "wrong", "wrong job secret");
    }
    allreduce_and_check(rt);
    std::printf("INTRUDER rank=%d size=%d backend=gloo allreduce=ok\n", rank, rt.topology().size);
    std::fflush(stdout);
    rt.shutdown();
    return 0;
  } catch (const std::exception& error) {
    die(error.what());
  }
}

#include "rendezvous/elastic_worker.h"

#include <cstdlib>
#include <thread>

#include "common/env_names.h"
#include "common/errors.h"
#include "rendezvous/client_environment.h"

namespace runrun::rendezvous {
namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(50);
constexpr double kDefaultTimeoutS = 600;  // Horovod's --elastic-timeout default

std::chrono::milliseconds timeout_from_environment() {
  const char* text = std::getenv(env::kElasticTimeout);
  double seconds = kDefaultTimeoutS;
  if (text != nullptr && *text != '\0') {
    char* end = nullptr;
    seconds = std::strtod(text, &end);
    RUNRUN_ENFORCE(*end == '\0' && seconds > 0 && seconds < 1e7, InvalidArgumentError,
                   std::string(env::kElasticTimeout) + "='" + text +
                       "' is not a positive number of seconds (runrun --elastic-timeout)");
  }
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

uint64_t parse_generation(const std::optional<std::string>& text) {
  if (!text) return 0;
  return std::strtoull(text->c_str(), nullptr, 10);
}

}  // namespace

ElasticWorker* ElasticWorker::of_this_process() {
  static ElasticWorker* worker = []() -> ElasticWorker* {
    const char* id = std::getenv(env::kElasticWorker);
    if (id == nullptr || *id == '\0') return nullptr;
    return new ElasticWorker(id, timeout_from_environment());  // lives as long as the process
  }();
  return worker;
}

ElasticWorker::ElasticWorker(std::string worker, std::chrono::milliseconds timeout)
    : worker_(std::move(worker)), timeout_(timeout) {}

RendezvousClient& ElasticWorker::client() {
  if (!client_) {
    ClientOptions options = client_options_from_environment();
    options.who = "elastic worker " + worker_;
    client_ = std::make_unique<RendezvousClient>(std::move(options));
  }
  return *client_;
}

ElasticAssignment ElasticWorker::join() {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  uint64_t generation = 0;
  for (;;) {
    try {
      generation = parse_generation(client().get(kElasticControlGeneration, kElasticGenerationKey));
    } catch (const Error&) {
      client_.reset();  // a broken connection is unusable: the next round connects again
      if (std::chrono::steady_clock::now() >= deadline) throw;
    }
    if (generation > joined_) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      throw TimeoutError(RUNRUN_WHERE,
                         "elastic worker " + worker_ +
                             ": no new generation of the job within "
                             "the elastic timeout (" +
                             std::to_string(timeout_.count() / 1000) +
                             " s: --elastic-timeout, RayExecutor's elastic_timeout) after "
                             "generation " +
                             std::to_string(joined_) +
                             "; the elastic driver (the launcher, or runrun.ray's driver) is "
                             "gone or cannot gather the minimum of ranks (--min-np, "
                             "min_workers)");
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  const auto text = client().get(generation, elastic_assignment_key(worker_));
  RUNRUN_ENFORCE(text.has_value(), InvalidArgumentError,
                 "elastic worker " + worker_ + " has no place in generation " +
                     std::to_string(generation) +
                     " of the job (the elastic driver is stopping it)");
  const auto assignment = parse_assignment(generation, *text);
  RUNRUN_ENFORCE(assignment.has_value(), InternalError,
                 "elastic worker " + worker_ + ": malformed assignment '" + *text +
                     "' in generation " + std::to_string(generation));
  client().set(generation, elastic_joined_key(worker_), "1");
  joined_ = generation;
  setenv(env::kRank, std::to_string(assignment->rank).c_str(), 1);
  setenv(env::kSize, std::to_string(assignment->size).c_str(), 1);
  setenv(env::kHostIndex, std::to_string(assignment->host_index).c_str(), 1);
  return *assignment;
}

uint64_t ElasticWorker::joined() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return joined_;
}

uint64_t ElasticWorker::latest() {
  std::lock_guard<std::mutex> lock(mutex_);
  try {
    return parse_generation(client().get(kElasticControlGeneration, kElasticGenerationKey));
  } catch (const Error&) {
    client_.reset();
    throw;
  }
}

void ElasticWorker::report_failure() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (joined_ == 0) return;
  try {
    client().add(kElasticControlGeneration, elastic_failed_key(joined_), 1);
  } catch (const Error&) {
    client_.reset();
    throw;
  }
}

}  // namespace runrun::rendezvous

#include "ops/gloo/gloo_shm_board.h"

#include <cstdlib>
#include <string>
#include <vector>

#include "common/env_names.h"
#include "common/errors.h"

namespace runrun::gloo_backend {

void StoreBoard::set(const std::string& key, const std::string& value) {
  store_->set(key, std::vector<char>(value.begin(), value.end()));
}

std::string StoreBoard::get(const std::string& key, std::chrono::milliseconds timeout) {
  try {
    store_->wait({key}, timeout);
    const auto bytes = store_->get(key);
    return std::string(bytes.begin(), bytes.end());
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw TimeoutError(RUNRUN_WHERE, "connecting the shared-memory group: key '" + key +
                                         "' did not appear in the rendezvous store within " +
                                         std::to_string(timeout.count()) + " ms (" + e.what() +
                                         "); a rank of this host did not get there: check the "
                                         "other ranks' output");
  }
}

bool shared_memory_from_environment() {
  const char* text = std::getenv(env::kGlooShm);
  if (text == nullptr || *text == '\0' || std::string(text) == "1") return true;
  if (std::string(text) == "0") return false;
  throw InvalidArgumentError(RUNRUN_WHERE, std::string(env::kGlooShm) + "='" + text +
                                               "' is not 0 or 1 (1, the default: ranks on one "
                                               "host move bytes through shared memory; 0: TCP)");
}

bool single_copy_from_environment() {
  const char* text = std::getenv(env::kGlooShmSingleCopy);
  if (text == nullptr || *text == '\0' || std::string(text) == "0") return false;
  if (std::string(text) == "1") return true;
  throw InvalidArgumentError(RUNRUN_WHERE, std::string(env::kGlooShmSingleCopy) + "='" + text +
                                               "' is not 0 or 1 (0, the default: a large "
                                               "allreduce over shared memory copies through the "
                                               "slots; 1: it reads peers' buffers directly where "
                                               "permitted)");
}

}  // namespace runrun::gloo_backend

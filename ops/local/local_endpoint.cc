#include "ops/local/local_endpoint.h"

#include <string>
#include <utility>

#include "common/errors.h"

namespace runrun {

LocalEndpoint::LocalEndpoint(std::shared_ptr<LocalWorld> world, int rank)
    : world_(std::move(world)), rank_(rank) {
  if (!world_) throw InvalidArgumentError(RUNRUN_WHERE, "LocalBackend: the world is null");
  if (rank < 0 || rank >= world_->size()) {
    throw InvalidArgumentError(RUNRUN_WHERE, "LocalBackend: rank " + std::to_string(rank) +
                                                 " is not in [0, " +
                                                 std::to_string(world_->size()) + ")");
  }
}

LocalWorld::Blob LocalEndpoint::stage(const void* data, size_t bytes) {
  if (bytes == 0) return std::make_shared<const std::string>();
  return std::make_shared<const std::string>(static_cast<const char*>(data), bytes);
}

LocalWorld::ExchangeResult LocalEndpoint::exchange(LocalChannel channel,
                                                   LocalWorld::Blob contribution,
                                                   const std::string& signature, const char* op) {
  if (broken_) std::rethrow_exception(broken_);
  try {
    return world_->exchange(channel, rank_, std::move(contribution), signature, aborted_, op);
  } catch (const PeerFailureError&) {
    broken_ = std::current_exception();
    throw;
  } catch (const TimeoutError&) {
    broken_ = std::current_exception();
    throw;
  } catch (const InternalError&) {
    broken_ = std::current_exception();
    throw;
  }
}

void LocalEndpoint::abort() {
  aborted_.store(true);
  world_->depart(rank_, "rank " + std::to_string(rank_) + " shut down (its backend was aborted)");
  world_->wake_all();
}

}  // namespace runrun

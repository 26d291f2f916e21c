#include "ops/gloo/rendezvous_store.h"

#include "common/errors.h"

namespace runrun::ops {

RendezvousStore::RendezvousStore(std::shared_ptr<rendezvous::RendezvousClient> client,
                                 uint64_t generation, std::chrono::milliseconds get_timeout)
    : client_(std::move(client)), generation_(generation), get_timeout_(get_timeout) {}

RendezvousStore::RendezvousStore(std::shared_ptr<rendezvous::RendezvousClient> client,
                                 uint64_t generation, std::chrono::milliseconds get_timeout,
                                 std::shared_ptr<void> server)
    : server_(std::move(server)),
      client_(std::move(client)),
      generation_(generation),
      get_timeout_(get_timeout) {}

void RendezvousStore::set(const std::string& key, const std::vector<char>& data) {
  requests_ += 1;
  client_->set(generation_, key, std::string(data.begin(), data.end()));
}

std::vector<char> RendezvousStore::get(const std::string& key) {
  requests_ += 2;
  client_->wait(generation_, {key}, get_timeout_);
  auto value = client_->get(generation_, key);
  RUNRUN_ENFORCE(value.has_value(), InternalError,
                 "rendezvous key '" + key + "' vanished between wait and get");
  bytes_read_ += value->size();
  return std::vector<char>(value->begin(), value->end());
}

void RendezvousStore::wait(const std::vector<std::string>& keys) { wait(keys, get_timeout_); }

void RendezvousStore::wait(const std::vector<std::string>& keys,
                           const std::chrono::milliseconds& timeout) {
  requests_ += 1;
  client_->wait(generation_, keys, timeout);
}

RendezvousStore::Traffic RendezvousStore::traffic() const {
  return {requests_.load(), bytes_read_.load()};
}

std::string traffic_summary(const gloo::rendezvous::Store& store) {
  const auto* ours = dynamic_cast<const RendezvousStore*>(&store);
  if (ours == nullptr) return {};
  const auto traffic = ours->traffic();
  return std::to_string(traffic.requests) + " store requests, " +
         std::to_string(traffic.bytes_read) + " bytes read";
}

}  // namespace runrun::ops

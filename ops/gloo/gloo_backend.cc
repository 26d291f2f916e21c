#include "ops/gloo/gloo_backend.h"

#include <chrono>
#include <exception>
#include <utility>

#include <gloo/rendezvous/prefix_store.h>

#include "common/errors.h"
#include "ops/gloo/gloo_shm_board.h"
#include "ops/gloo/gloo_topology.h"
#include "ops/gloo/rendezvous_store.h"
#include "ops/shm/shm_control_channel.h"

namespace runrun::gloo_backend {
namespace {

using StartupClock = std::chrono::steady_clock;

double ms_since(StartupClock::time_point start) {
  return std::chrono::duration<double, std::milli>(StartupClock::now() - start).count();
}

}  // namespace

std::unique_ptr<Backend> make_gloo_backend(std::shared_ptr<::gloo::rendezvous::Store> store,
                                           int rank, int size, GlooBackendOptions options) {
  if (!store || size < 1 || rank < 0 || rank >= size) {
    throw InvalidArgumentError(RUNRUN_WHERE,
                               "creating the gloo backend: need a rendezvous store and 0 <= rank < "
                               "size, got rank " +
                                   std::to_string(rank) + ", size " + std::to_string(size) +
                                   (store ? "" : ", no store"));
  }
  auto device = make_tcp_device(options.hostname, options.interface);
  std::string prefix = options.prefix;
  return std::unique_ptr<Backend>(new GlooBackend(std::move(store), std::move(prefix), rank, size,
                                                  std::move(device), std::move(options), {}));
}

GlooBackend::GlooBackend(std::shared_ptr<::gloo::rendezvous::Store> store, std::string prefix,
                         int rank, int size, std::shared_ptr<::gloo::transport::Device> device,
                         GlooBackendOptions options, std::vector<std::string> hosts)
    : store_(std::move(store)),
      prefix_(std::move(prefix)),
      device_(std::move(device)),
      options_(std::move(options)),
      hosts_(std::move(hosts)) {
  // Start-up phases, logged at debug level (tests/perf/scale/startup_bench.sh reads them).
  const auto start = StartupClock::now();
  if (hosts_.empty()) hosts_ = exchange_hosts(rank, size);
  const double hosts_ms = ms_since(start);
  topology_ = topology_from_hosts(hosts_, rank);
  guard_ = std::make_unique<Guard>(rank, options_.collective_timeout);
  const auto mesh_start = StartupClock::now();
  data_ = std::make_unique<Mesh>(*store_, prefix_ + "/data", rank, size, device_,
                                 options_.connect_timeout);
  const double mesh_ms = ms_since(mesh_start);
  guard_->watch(data_.get());
  small_ = std::make_unique<DirectMailbox>(*data_, kMailboxFirstCapacity);
  board_ = std::make_shared<StoreBoard>(store_);
  shm_ = connect_shared_memory(prefix_ + "/shm");
  if (options_.logger) {
    options_.logger->debug("gloo backend rank {}/{} connected (store prefix '{}', device {})", rank,
                           size, prefix_, device_->str());
    options_.logger->debug(
        "gloo start-up rank {}/{} '{}': hosts exchange {:.1f} ms, data mesh "
        "{:.1f} ms, in all {:.1f} ms; {}",
        rank, size, prefix_, hosts_ms, mesh_ms, ms_since(start), ops::traffic_summary(*store_));
  }
}

GlooBackend::~GlooBackend() = default;

std::unique_ptr<shm::Group> GlooBackend::connect_shared_memory(const std::string& key) {
  if (!options_.shared_memory || hosts_.size() < 2) return nullptr;
  for (const auto& host : hosts_) {
    if (host != hosts_[0]) return nullptr;  // spans hosts: TCP (the same decision everywhere)
  }
  shm::GroupOptions group_options;
  group_options.collective_timeout = options_.collective_timeout;
  group_options.connect_timeout = options_.connect_timeout;
  group_options.capacity = options_.shared_memory_slot_bytes;
  group_options.single_copy = options_.shared_memory_single_copy;
  std::string why_not;
  auto group =
      shm::Group::connect(*board_, key, topology_.rank, topology_.size, group_options, &why_not);
  if (options_.logger) {
    if (group) {
      options_.logger->debug("gloo rank {}/{}: '{}' over shared memory", topology_.rank,
                             topology_.size, key);
    } else {
      options_.logger->warn(
          "gloo rank {}/{}: '{}' stays on TCP: the shared-memory segment "
          "could not be used ({})",
          topology_.rank, topology_.size, key, why_not);
    }
  }
  return group;
}

std::unique_ptr<ControlChannel> GlooBackend::create_control_channel() {
  guard_->check_usable("create_control_channel");
  const uint64_t number = control_channels_created_++;
  GlooChannelOptions channel_options;
  channel_options.collective_timeout = options_.collective_timeout;
  channel_options.connect_timeout = options_.connect_timeout;
  const std::string prefix =
      prefix_ + "/control" + (number == 0 ? std::string() : std::to_string(number));
  if (shm_) {  // every rank here: negotiation over shared memory too
    if (auto group = connect_shared_memory(prefix + "/shm")) {
      shm::GroupOptions group_options;
      group_options.collective_timeout = options_.collective_timeout;
      group_options.connect_timeout = options_.connect_timeout;
      group_options.capacity = options_.shared_memory_slot_bytes;
      group_options.single_copy = false;  // negotiation moves small messages only
      return std::make_unique<shm::ShmControlChannel>(board_, prefix + "/shm", std::move(group),
                                                      group_options);
    }
  }
  const auto start = StartupClock::now();
  auto channel = std::make_unique<GlooControlChannel>(store_, prefix, rank(), size(), device_,
                                                      channel_options);
  if (options_.logger) {
    options_.logger->debug("gloo start-up rank {}/{} '{}': control mesh {:.1f} ms; {}", rank(),
                           size(), prefix, ms_since(start), ops::traffic_summary(*store_));
  }
  return channel;
}

std::vector<std::string> GlooBackend::exchange_hosts(int rank, int size) {
  const std::string host = options_.host_id.empty() ? this_host_name() : options_.host_id;
  std::vector<std::string> hosts(static_cast<size_t>(size));
  try {
    ::gloo::rendezvous::PrefixStore scoped(prefix_ + "/hosts", *store_);
    scoped.set(std::to_string(rank), std::vector<char>(host.begin(), host.end()));
    std::vector<std::string> keys;
    for (int r = 0; r < size; ++r) keys.push_back(std::to_string(r));
    scoped.wait(keys, options_.connect_timeout);
    for (int r = 0; r < size; ++r) {
      const auto bytes = scoped.get(keys[static_cast<size_t>(r)]);
      hosts[static_cast<size_t>(r)].assign(bytes.begin(), bytes.end());
    }
  } catch (const std::exception& e) {
    throw TimeoutError(RUNRUN_WHERE, "creating the gloo backend on rank " + std::to_string(rank) +
                                         ": not every one of the " + std::to_string(size) +
                                         " ranks registered in the rendezvous store (prefix '" +
                                         prefix_ + "') within " +
                                         std::to_string(options_.connect_timeout.count()) +
                                         " ms: " + e.what() + "; check the other ranks' output");
  }
  return hosts;
}

}  // namespace runrun::gloo_backend

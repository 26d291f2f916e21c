#pragma once
// Why: the Backend over Gloo (Debian's libgloo-dev, tcp transport), so a job needs no MPI at
// all: ranks find each other through a rendezvous store (gloo::rendezvous::Store; an in-memory
// HashStore in tests, the launcher's TCP store in real jobs) and connect directly. A backend
// owns one fully connected gloo context for data collectives (`<prefix>/data`);
// create_control_channel() connects another one over the same tcp device for a control channel
// the caller owns (`<prefix>/control`), so negotiation never matches a collective's messages.
// Collectives are built from gloo's point-to-point transfers (gloo_exchange.h) and reduce
// through the ops/cpu kernels; every wait runs through a Guard (abort, collective timeout,
// error translation). They run to the end on the calling thread and return a completed (or
// failed) Completion: gloo's waits happen on the calling thread anyway. Buffers must be host
// memory (UnsupportedError otherwise). Subgroups (process sets) are new contexts over a
// sub-prefix of the same store, connected by their members only.
// When every rank of the (sub)group is on one host (same host id) and options.shared_memory is
// on (RUNRUN_GLOO_SHM, default), the collectives and the control channel run over a shared
// segment instead (ops/shm: memcpy and futexes, no TCP); the tcp context stays connected but
// carries only create_subgroup's agreement. Groups that span hosts use TCP throughout.
//
// Threading contract: as Backend: one driving thread; abort() from any thread. Different
// GlooBackend objects (e.g. subgroups) may be driven by different threads.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <gloo/rendezvous/store.h>
#include <gloo/transport/device.h>

#include "common/logging.h"
#include "ops/algorithms/algorithm_choice.h"
#include "ops/backend.h"
#include "ops/base/host_backend.h"
#include "ops/gloo/gloo_control_channel.h"
#include "ops/gloo/gloo_direct_mailbox.h"
#include "ops/gloo/gloo_guard.h"
#include "ops/gloo/gloo_mesh.h"
#include "ops/shm/shm_board.h"
#include "ops/shm/shm_group.h"

namespace runrun::gloo_backend {

struct GlooBackendOptions {
  Logger logger;  // may be null
  // RUNRUN_COLLECTIVE_TIMEOUT: a collective (or control call) not done within it on this rank
  // fails with TimeoutError; 0: no limit.
  std::chrono::milliseconds collective_timeout{0};
  // How long creating the backend (or a subgroup) waits for every rank to connect.
  std::chrono::milliseconds connect_timeout{std::chrono::minutes(5)};
  // Where the tcp device listens: a network interface name, else an address or host name to
  // bind, else (both empty) the address this host's name resolves to. Tests use 127.0.0.1.
  std::string interface;
  std::string hostname;
  // Identifies this rank's host for local/cross ranks (ranks with equal ids share a host);
  // empty: this machine's host name. Tests set it to pretend several hosts.
  std::string host_id;
  // Store keys of this backend live under this prefix; it must be unused in the store (one per
  // job and generation).
  std::string prefix = "runrun/gloo";
  // Collectives and control channels over shared memory when every rank is on this host
  // (RUNRUN_GLOO_SHM; docs/backends.md "Shared memory inside a host"), and the bytes a rank
  // moves per shared-memory step (slot size).
  bool shared_memory = true;
  size_t shared_memory_slot_bytes = size_t{1} << 20;
  // Large allreduces over shared memory read peers' buffers directly where the kernel permits
  // (RUNRUN_GLOO_SHM_SINGLE_COPY; ops/shm/shm_cma.h); off by default: the slots measured faster.
  bool shared_memory_single_copy = false;
  // Each collective's algorithm between hosts (RUNRUN_GLOO_ALLREDUCE, _ALLGATHER, _BROADCAST,
  // _REDUCESCATTER): by size and rank count, or one forced (ops/algorithms/algorithm_choice.h).
  algorithms::CollectiveAlgorithms algorithms;
};

// A backend over the `size` ranks that call it with the same store and prefix; collective over
// them (blocks until every rank connected, at most options.connect_timeout).
std::unique_ptr<Backend> make_gloo_backend(std::shared_ptr<::gloo::rendezvous::Store> store,
                                           int rank, int size, GlooBackendOptions options);

class GlooBackend final : public HostSynchronousBackend {
 public:
  ~GlooBackend() override;
  GlooBackend(const GlooBackend&) = delete;
  GlooBackend& operator=(const GlooBackend&) = delete;

  std::string_view name() const override { return "gloo"; }
  const Topology& topology() const override { return topology_; }

  // Collective: connects a new context under `<prefix>/control` (`/control<N>` for the N-th
  // after the first), blocking up to connect_timeout.
  std::unique_ptr<ControlChannel> create_control_channel() override;
  std::unique_ptr<Backend> create_subgroup(const std::vector<int>& ranks) override;

 protected:
  void abort_transport() override {
    guard_->abort();
    if (shm_) shm_->abort();
  }

 private:
  void run_allreduce(const void* in, void* out, size_t count, DataType type, ReduceOp op) override;
  void run_allgatherv(const void* in, size_t send_bytes, void* out,
                      const std::vector<size_t>& recv_bytes) override;
  void run_broadcast(void* buffer, size_t bytes, int root) override;
  void run_alltoallv(const void* in, const std::vector<size_t>& send_bytes, void* out,
                     const std::vector<size_t>& recv_bytes) override;
  void run_reducescatter(const void* in, void* out, const std::vector<size_t>& recv_counts,
                         DataType type, ReduceOp op) override;
  void run_barrier() override;

  friend std::unique_ptr<Backend> make_gloo_backend(std::shared_ptr<::gloo::rendezvous::Store>, int,
                                                    int, GlooBackendOptions);
  // Connects the data and control contexts under `prefix`. `hosts` holds every rank's host id
  // (empty: exchange them through the store).
  GlooBackend(std::shared_ptr<::gloo::rendezvous::Store> store, std::string prefix, int rank,
              int size, std::shared_ptr<::gloo::transport::Device> device,
              GlooBackendOptions options, std::vector<std::string> hosts);
  std::vector<std::string> exchange_hosts(int rank, int size);
  // A shared-memory group under `key` when every rank is on this host and the path is on
  // (collective; null on every rank otherwise, or when a rank could not map the segment).
  std::unique_ptr<shm::Group> connect_shared_memory(const std::string& key);
  // At least `bytes` of scratch memory, kept between calls (grown, never shrunk): a fresh
  // buffer per call would page-fault (and zero) large receives every time.
  char* scratch(size_t bytes);
  void allreduce_one_step(char* data, size_t count, DataType type, ReduceOp op,
                          Guard::Clock::time_point deadline);

  std::shared_ptr<::gloo::rendezvous::Store> store_;
  std::string prefix_;
  std::shared_ptr<::gloo::transport::Device> device_;
  GlooBackendOptions options_;
  std::vector<std::string> hosts_;
  Topology topology_;
  std::unique_ptr<Guard> guard_;
  std::unique_ptr<Mesh> data_;
  // The one-step allreduce's receives, posted an exchange ahead, for messages of up to
  // kMailboxMaxBytes: between two 1 Gbit/s namespace hosts 4 B to 32 KiB took 2-5x less time
  // through it, but 64 KiB 1.5x more (docs/benchmarks.md §7), so larger ones post as they go.
  // Posted at kMailboxFirstCapacity first, doubling as larger ones come. After data_: destroyed
  // before it.
  static constexpr size_t kMailboxMaxBytes = size_t{32} << 10;
  static constexpr size_t kMailboxFirstCapacity = size_t{4} << 10;
  std::unique_ptr<DirectMailbox> small_;
  uint64_t subgroups_created_ = 0;
  uint64_t control_channels_created_ = 0;
  std::vector<char> scratch_;          // kept between collectives (grown, never shrunk)
  std::shared_ptr<shm::Board> board_;  // the store as a shm::Board
  std::unique_ptr<shm::Group> shm_;    // set: collectives run over shared memory
};

}  // namespace runrun::gloo_backend

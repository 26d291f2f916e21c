#include "ops/local/local_backend.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "common/errors.h"
#include "ops/base/backend_checks.h"
#include "ops/cpu/reduce_kernels.h"
#include "ops/local/local_control_channel.h"

namespace runrun {
namespace {

using backend_checks::to_string;
using backend_checks::total;

std::string reduce_signature(const char* op, DataType type, ReduceOp reduce,
                             const std::string& counts) {
  return std::string(op) + " " + std::string(data_type_name(type)) + " " +
         std::string(reduce_op_name(reduce)) + " counts=" + counts;
}

// out = contributions[0] op contributions[1] op ... (rank order), `count` elements from
// `offset_elements` of each contribution.
void reduce_contributions(const std::vector<LocalWorld::Blob>& contributions,
                          size_t offset_elements, void* out, size_t count, DataType type,
                          ReduceOp op) {
  if (count == 0) return;
  const size_t esize = element_size(type);
  std::memcpy(out, contributions[0]->data() + offset_elements * esize, count * esize);
  for (size_t r = 1; r < contributions.size(); ++r) {
    cpu::reduce_into(out, contributions[r]->data() + offset_elements * esize, count, type, op);
  }
}

}  // namespace

LocalBackend::LocalBackend(std::shared_ptr<LocalWorld> world, int rank)
    : endpoint_(std::make_shared<LocalEndpoint>(std::move(world), rank)),
      topology_(endpoint_->world()->topology_of(rank)) {}

std::unique_ptr<ControlChannel> LocalBackend::create_control_channel() {
  return std::make_unique<LocalControlChannel>(
      std::make_shared<LocalEndpoint>(endpoint_->world(), rank()));
}

void LocalBackend::run_allreduce(const void* in, void* out, size_t count, DataType type,
                                 ReduceOp op) {
  backend_checks::check_reduce_op(*this, "allreduce", op);
  auto result = endpoint_->exchange(
      LocalChannel::kData, LocalEndpoint::stage(in, count * element_size(type)),
      reduce_signature("allreduce", type, op, std::to_string(count)), "allreduce");
  reduce_contributions(result.contributions, 0, out, count, type, op);
}

void LocalBackend::run_allgatherv(const void* in, size_t send_bytes, void* out,
                                  const std::vector<size_t>& recv_bytes) {
  backend_checks::check_allgatherv(*this, send_bytes, recv_bytes);
  auto result = endpoint_->exchange(LocalChannel::kData, LocalEndpoint::stage(in, send_bytes),
                                    "allgatherv recv_bytes=" + to_string(recv_bytes), "allgatherv");
  char* cursor = static_cast<char*>(out);
  for (size_t r = 0; r < recv_bytes.size(); ++r) {
    if (recv_bytes[r] > 0) std::memcpy(cursor, result.contributions[r]->data(), recv_bytes[r]);
    cursor += recv_bytes[r];
  }
}

void LocalBackend::run_broadcast(void* buffer, size_t bytes, int root) {
  backend_checks::check_root(*this, "broadcast", root);
  const bool is_root = rank() == root;
  auto result = endpoint_->exchange(
      LocalChannel::kData, LocalEndpoint::stage(is_root ? buffer : nullptr, is_root ? bytes : 0),
      "broadcast bytes=" + std::to_string(bytes) + " root=" + std::to_string(root), "broadcast");
  if (!is_root && bytes > 0) {
    std::memcpy(buffer, result.contributions[static_cast<size_t>(root)]->data(), bytes);
  }
}

void LocalBackend::run_alltoallv(const void* in, const std::vector<size_t>& send_bytes, void* out,
                                 const std::vector<size_t>& recv_bytes) {
  backend_checks::check_per_rank(*this, "alltoallv", "send_bytes", send_bytes.size());
  backend_checks::check_per_rank(*this, "alltoallv", "recv_bytes", recv_bytes.size());
  // Contribution: the per-destination sizes, then the data, so receivers find their block.
  std::string staged(send_bytes.size() * sizeof(size_t), '\0');
  std::memcpy(staged.data(), send_bytes.data(), staged.size());
  if (total(send_bytes) > 0) staged.append(static_cast<const char*>(in), total(send_bytes));
  auto result = endpoint_->exchange(LocalChannel::kData,
                                    std::make_shared<const std::string>(std::move(staged)),
                                    "alltoallv", "alltoallv");
  const auto me = static_cast<size_t>(rank());
  char* cursor = static_cast<char*>(out);
  for (size_t peer = 0; peer < recv_bytes.size(); ++peer) {
    const std::string& blob = *result.contributions[peer];
    std::vector<size_t> peer_sends(recv_bytes.size());
    std::memcpy(peer_sends.data(), blob.data(), peer_sends.size() * sizeof(size_t));
    if (peer_sends[me] != recv_bytes[peer]) {
      throw MismatchError(RUNRUN_WHERE,
                          "alltoallv on rank " + std::to_string(rank()) + ": rank " +
                              std::to_string(peer) + " sends " + std::to_string(peer_sends[me]) +
                              " bytes but this rank "
                              "expects recv_bytes[" +
                              std::to_string(peer) + "] = " + std::to_string(recv_bytes[peer]));
    }
    size_t offset = peer_sends.size() * sizeof(size_t);
    for (size_t p = 0; p < me; ++p) offset += peer_sends[p];
    if (recv_bytes[peer] > 0) std::memcpy(cursor, blob.data() + offset, recv_bytes[peer]);
    cursor += recv_bytes[peer];
  }
}

void LocalBackend::run_reducescatter(const void* in, void* out,
                                     const std::vector<size_t>& recv_counts, DataType type,
                                     ReduceOp op) {
  backend_checks::check_reduce_op(*this, "reducescatter", op);
  backend_checks::check_per_rank(*this, "reducescatter", "recv_counts", recv_counts.size());
  auto result = endpoint_->exchange(
      LocalChannel::kData, LocalEndpoint::stage(in, total(recv_counts) * element_size(type)),
      reduce_signature("reducescatter", type, op, to_string(recv_counts)), "reducescatter");
  const auto me = static_cast<size_t>(rank());
  size_t offset = 0;
  for (size_t r = 0; r < me; ++r) offset += recv_counts[r];
  reduce_contributions(result.contributions, offset, out, recv_counts[me], type, op);
}

void LocalBackend::run_barrier() {
  endpoint_->exchange(LocalChannel::kData, LocalEndpoint::stage(nullptr, 0), "barrier", "barrier");
}

std::unique_ptr<Backend> LocalBackend::create_subgroup(const std::vector<int>& ranks) {
  const bool valid = !ranks.empty() && std::is_sorted(ranks.begin(), ranks.end()) &&
                     std::adjacent_find(ranks.begin(), ranks.end()) == ranks.end() &&
                     ranks.front() >= 0 && ranks.back() < size();
  if (!valid) {
    std::vector<size_t> shown(ranks.begin(), ranks.end());
    throw InvalidArgumentError(RUNRUN_WHERE, "create_subgroup on rank " + std::to_string(rank()) +
                                                 ": ranks must be non-empty, sorted, unique and in "
                                                 "[0, " +
                                                 std::to_string(size()) + "), got " +
                                                 to_string(shown));
  }
  std::vector<size_t> shown(ranks.begin(), ranks.end());
  auto result = endpoint_->exchange(LocalChannel::kData, LocalEndpoint::stage(nullptr, 0),
                                    "create_subgroup ranks=" + to_string(shown), "create_subgroup");
  auto it = std::find(ranks.begin(), ranks.end(), rank());
  if (it == ranks.end()) return nullptr;
  auto world = endpoint_->world()->subgroup_world(LocalChannel::kData, result.generation, ranks);
  return std::make_unique<LocalBackend>(std::move(world), static_cast<int>(it - ranks.begin()));
}

void LocalBackend::abort_transport() { endpoint_->abort(); }

}  // namespace runrun

#include "ops/hierarchical/hierarchical_backend.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "common/errors.h"
#include "ops/base/backend_checks.h"
#include "ops/base/block_layout.h"
#include "ops/hierarchical/hierarchy.h"

namespace runrun {
namespace {

// Every rank's (cross_rank, local_size, cross_size), indexed by rank, over `flat`.
std::vector<int32_t> exchange_topologies(Backend& flat) {
  const auto& t = flat.topology();
  const int32_t mine[3] = {t.cross_rank, t.local_size, t.cross_size};
  const auto n = static_cast<size_t>(flat.size());
  std::vector<int32_t> all(3 * n);
  flat.allgatherv(mine, sizeof(mine), all.data(), std::vector<size_t>(n, sizeof(mine)));
  return all;
}

}  // namespace

std::unique_ptr<Backend> make_hierarchical(std::unique_ptr<Backend> flat, std::string* why_not) {
  HierarchySplit split = split_hierarchy(*flat, exchange_topologies(*flat), why_not);
  if (!split.local) return flat;
  return std::make_unique<HierarchicalBackend>(std::move(flat), std::move(split.local),
                                               std::move(split.cross));
}

HierarchicalBackend::HierarchicalBackend(std::unique_ptr<Backend> flat,
                                         std::unique_ptr<Backend> local,
                                         std::unique_ptr<Backend> cross)
    : FlatForwarding(std::move(flat)), local_(std::move(local)), cross_(std::move(cross)) {}

Backend::CompletionPtr HierarchicalBackend::start_allreduce(ConstDeviceBuffer in, DeviceBuffer out,
                                                            size_t count, DataType type,
                                                            ReduceOp op) {
  if (!enabled_ || !is_cpu(in.device) || !is_cpu(out.device)) {
    return flat_->start_allreduce(in, out, count, type, op);
  }
  backend_checks::check_reduce_op(*this, "allreduce", op);
  return run_to_completion([&] {
    if (count == 0) return;  // the same decision on every rank
    const size_t esize = element_size(type);
    char* data = static_cast<char*>(out.data);
    if (in.data != out.data) std::memmove(data, in.data, count * esize);
    const auto slices = even_split(count, static_cast<size_t>(local_->size()));
    const auto place = static_cast<size_t>(local_->rank());
    const size_t mine = slices[place] * esize;
    if (slice_.size() < mine) slice_.resize(mine);
    // Inside the host: slice `place` reduced over the host's ranks, into slice_.
    local_->reducescatter(data, slice_.data(), slices, type, op);
    // Across hosts: that slice over the rank holding it on every host.
    if (slices[place] > 0) cross_->allreduce(slice_.data(), slice_.data(), slices[place], type, op);
    // Inside the host: every reduced slice to every rank.
    std::vector<size_t> bytes(slices.size());
    for (size_t p = 0; p < slices.size(); ++p) bytes[p] = slices[p] * esize;
    local_->allgatherv(slice_.data(), mine, data, bytes);
  });
}

void HierarchicalBackend::abort_transport() {
  FlatForwarding::abort_transport();
  local_->abort();
  cross_->abort();
}

}  // namespace runrun

#include "ops/base/backend_checks.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <string>

#include "common/errors.h"

namespace runrun::backend_checks {
namespace {

std::string where(const Backend& backend, const char* collective) {
  return std::string(collective) + " on rank " + std::to_string(backend.rank()) + " (" +
         std::string(backend.name()) + " backend, group size " + std::to_string(backend.size()) +
         ")";
}

}  // namespace

void check_cpu_device(const Backend& backend, const char* collective, DLDevice device) {
  if (is_cpu(device)) return;
  throw UnsupportedError(RUNRUN_WHERE, where(backend, collective) + ": a buffer is on " +
                                           device_string(device) + ", but the " +
                                           std::string(backend.name()) +
                                           " backend moves host (cpu) memory only; move the "
                                           "tensor to the CPU or use a backend for that device");
}

void check_reduce_op(const Backend& backend, const char* collective, ReduceOp op) {
  if (op == ReduceOp::kSum || op == ReduceOp::kMin || op == ReduceOp::kMax ||
      op == ReduceOp::kProduct) {
    return;
  }
  throw InvalidArgumentError(RUNRUN_WHERE, where(backend, collective) + ": reduce op " +
                                               std::string(reduce_op_name(op)) +
                                               " is not a backend reduction: pass sum, min, max "
                                               "or product (an average is a sum plus a division)");
}

void check_root(const Backend& backend, const char* collective, int root) {
  if (root >= 0 && root < backend.size()) return;
  throw InvalidArgumentError(RUNRUN_WHERE, where(backend, collective) + ": root rank " +
                                               std::to_string(root) + " is not in [0, " +
                                               std::to_string(backend.size()) + ")");
}

void check_per_rank(const Backend& backend, const char* collective, const char* what,
                    size_t entries) {
  if (entries == static_cast<size_t>(backend.size())) return;
  throw InvalidArgumentError(
      RUNRUN_WHERE, where(backend, collective) + ": " + what + " has " + std::to_string(entries) +
                        " entries but the group has " + std::to_string(backend.size()) +
                        " ranks: pass one entry per rank");
}

void check_allgatherv(const Backend& backend, size_t send_bytes,
                      const std::vector<size_t>& recv_bytes) {
  check_per_rank(backend, "allgatherv", "recv_bytes", recv_bytes.size());
  const size_t mine = recv_bytes[static_cast<size_t>(backend.rank())];
  if (mine == send_bytes) return;
  throw InvalidArgumentError(RUNRUN_WHERE, where(backend, "allgatherv") + ": send_bytes is " +
                                               std::to_string(send_bytes) +
                                               " but recv_bytes[rank] is " + std::to_string(mine) +
                                               ": they must be equal");
}

void check_subgroup_ranks(const char* op, int rank, int size, const std::vector<int>& ranks) {
  const bool valid = !ranks.empty() && std::is_sorted(ranks.begin(), ranks.end()) &&
                     std::adjacent_find(ranks.begin(), ranks.end()) == ranks.end() &&
                     ranks.front() >= 0 && ranks.back() < size;
  if (!valid) {
    throw InvalidArgumentError(RUNRUN_WHERE, std::string(op) + " on rank " + std::to_string(rank) +
                                                 ": ranks must be non-empty, sorted, unique and "
                                                 "in [0, " +
                                                 std::to_string(size) + "), got " +
                                                 to_string({ranks.begin(), ranks.end()}));
  }
}

void check_subgroup_ranks(const Backend& backend, const std::vector<int>& ranks) {
  check_subgroup_ranks("create_subgroup", backend.rank(), backend.size(), ranks);
}

uint64_t ranks_fingerprint(const std::vector<int>& ranks) {
  uint64_t hash = 1469598103934665603ull;  // FNV-1a
  for (int r : ranks) {
    hash = (hash ^ static_cast<uint64_t>(static_cast<uint32_t>(r))) * 1099511628211ull;
  }
  return hash ^ ranks.size();
}

size_t total(const std::vector<size_t>& sizes) {
  return std::accumulate(sizes.begin(), sizes.end(), size_t{0});
}

bool overlaps(const void* a, size_t a_bytes, const void* b, size_t b_bytes) {
  if (a_bytes == 0 || b_bytes == 0) return false;
  const auto* pa = static_cast<const char*>(a);
  const auto* pb = static_cast<const char*>(b);
  std::less<const char*> less;
  return less(pa, pb + b_bytes) && less(pb, pa + a_bytes);
}

std::string to_string(const std::vector<size_t>& sizes) {
  std::string text = "[";
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(sizes[i]);
  }
  return text + "]";
}

}  // namespace runrun::backend_checks

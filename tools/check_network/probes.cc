#include "tools/check_network/probes.h"

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "common/data_type.h"
#include "common/reduce_op.h"

namespace runrun::check_network {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// One 8-byte allreduce: a round trip that also orders everyone after what came before.
void sync(Backend& backend) {
  double value = 0;
  backend.allreduce(&value, &value, 1, DataType::kFloat64, ReduceOp::kSum);
}

// Rank 0's value on every rank.
int64_t agree(Backend& backend, int64_t value) {
  backend.broadcast(&value, sizeof(value), 0);
  return value;
}

int64_t iterations_for(double one_s, double budget_s, int64_t low, int64_t high) {
  const double wanted = one_s > 0 ? budget_s / one_s : static_cast<double>(high);
  return std::clamp(static_cast<int64_t>(wanted), low, high);
}

// Each measurement is taken in this many timed blocks and the best block counts: other load on
// a host (or the network) can only make a block slower, never faster than the link allows.
constexpr int kBlocks = 3;

double latency_us(Backend& pair, double budget_s) {
  for (int i = 0; i < 5; ++i) sync(pair);
  auto start = Clock::now();
  for (int i = 0; i < 10; ++i) sync(pair);
  const int64_t n =
      agree(pair, iterations_for(seconds_since(start) / 10, budget_s / kBlocks, 10, 1000));
  double best = 0;
  for (int block = 0; block < kBlocks; ++block) {
    start = Clock::now();
    for (int64_t i = 0; i < n; ++i) sync(pair);
    const double seconds = seconds_since(start);
    best = block == 0 ? seconds : std::min(best, seconds);
  }
  return best / static_cast<double>(n) * 1e6;
}

constexpr std::size_t kFirstBytes = 256 << 10;
constexpr std::size_t kMaxBytes = 64 << 20;
constexpr double kLongEnoughS = 0.02;  // a transfer this long is timed well enough

// Gbit/s of broadcasts from `root` to the other rank of the pair.
double bandwidth_gbit(Backend& pair, int root, double budget_s, std::vector<char>& buffer) {
  std::size_t bytes = kFirstBytes;
  double one_s = 0;
  for (;;) {
    if (buffer.size() < bytes) buffer.resize(bytes);
    for (int attempt = 0; attempt < 2; ++attempt) {  // the faster of two: a stall is not the link
      const auto start = Clock::now();
      pair.broadcast(buffer.data(), bytes, root);
      sync(pair);
      one_s = attempt == 0 ? seconds_since(start) : std::min(one_s, seconds_since(start));
    }
    if (agree(pair, one_s < kLongEnoughS && bytes < kMaxBytes ? 1 : 0) == 0) break;
    bytes *= 4;
  }
  const int64_t n = agree(pair, iterations_for(one_s, budget_s / kBlocks, 1, 40));
  double best = 0;
  for (int block = 0; block < kBlocks; ++block) {
    const auto start = Clock::now();
    for (int64_t i = 0; i < n; ++i) {
      pair.broadcast(buffer.data(), bytes, root);
      sync(pair);
    }
    const double seconds = seconds_since(start);
    best = block == 0 ? seconds : std::min(best, seconds);
  }
  // The time on rank 0 of the pair; the other's is the same to within one sync. Agree anyway,
  // so both print the same numbers.
  double gbit = static_cast<double>(bytes) * 8.0 * static_cast<double>(n) / best / 1e9;
  pair.broadcast(&gbit, sizeof(gbit), 0);
  return gbit;
}

}  // namespace

PairResult probe_pair(Backend& pair, double budget_s) {
  PairResult result;
  result.latency_us = latency_us(pair, budget_s / 4);
  pair.broadcast(&result.latency_us, sizeof(result.latency_us), 0);
  std::vector<char> buffer;
  result.gbit_a_to_b = bandwidth_gbit(pair, 0, budget_s, buffer);
  result.gbit_b_to_a = bandwidth_gbit(pair, 1, budget_s, buffer);
  return result;
}

std::vector<AllreduceResult> probe_allreduce(Backend& all, const std::vector<std::size_t>& sizes,
                                             double budget_s) {
  std::vector<AllreduceResult> results;
  const double p = all.size();
  for (std::size_t bytes : sizes) {
    const std::size_t count = bytes / sizeof(float);
    std::vector<float> data(count, 0.0f);  // zeros stay finite over any number of sums
    all.allreduce(data.data(), data.data(), count, DataType::kFloat32, ReduceOp::kSum);  // warm
    auto start = Clock::now();
    all.allreduce(data.data(), data.data(), count, DataType::kFloat32, ReduceOp::kSum);
    const int64_t n = agree(all, iterations_for(seconds_since(start), budget_s, 1, 200));
    sync(all);
    start = Clock::now();
    for (int64_t i = 0; i < n; ++i) {
      all.allreduce(data.data(), data.data(), count, DataType::kFloat32, ReduceOp::kSum);
    }
    double seconds = seconds_since(start) / static_cast<double>(n);
    all.broadcast(&seconds, sizeof(seconds), 0);
    AllreduceResult row;
    row.bytes = count * sizeof(float);
    row.seconds = seconds;
    row.algbw_gbit = static_cast<double>(row.bytes) * 8.0 / seconds / 1e9;
    row.busbw_gbit = row.algbw_gbit * 2.0 * (p - 1) / p;
    results.push_back(row);
  }
  return results;
}

}  // namespace runrun::check_network

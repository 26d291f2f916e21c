#pragma once
// Why: what `runrun --check-network` measured, turned into what a user acts on: one table
// (latency and bandwidth of every host pair, allreduce across all hosts), the pairs that stand
// out ("host b <-> c: 0.9 Gbit/s, others 9.1") and whether any pair is below --min-bandwidth.
// Kept apart from the measuring so the judgement is a pure function with unit tests.
// Thread-safety: pure functions over plain values.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace runrun::check_network {

// One host pair, measured point-to-point between the two hosts' processes only.
struct PairResult {
  int a = 0;               // host index (the lower one)
  int b = 0;               // host index (the higher one)
  double latency_us = 0;   // one small (8-byte) allreduce between the two: about a round trip
  double gbit_a_to_b = 0;  // Gbit/s (10^9 bit/s) of a large transfer from a to b
  double gbit_b_to_a = 0;
  double gbit() const { return gbit_a_to_b < gbit_b_to_a ? gbit_a_to_b : gbit_b_to_a; }
};

// One allreduce size across every host (one process per host).
struct AllreduceResult {
  std::size_t bytes = 0;
  double seconds = 0;     // mean time of one allreduce
  double algbw_gbit = 0;  // bytes / time
  double busbw_gbit = 0;  // algbw * 2(p-1)/p: what each link carried (NCCL's convention)
};

struct NetworkCheck {
  std::string transport;           // "gloo" or "mpi"
  std::vector<std::string> hosts;  // as the user named them, in host order
  std::vector<PairResult> pairs;   // every pair a < b
  std::vector<AllreduceResult> allreduce;
  std::optional<double> min_bandwidth_gbit;  // --min-bandwidth
};

// The outliers are the pairs below the widest gap between the sorted pair bandwidths, when
// that gap is at least this factor. A gap, not a fraction of the fastest or the median pair:
// a misconfigured path is typically ten times slower than the rest (1 vs 10 Gbit/s, a
// management network), while the healthy pairs of a busy cluster spread over a range without
// such a gap; with three hosts and one slow host, two of the three pairs are slow.
inline constexpr double kOutlierGap = 4.0;

// The outlier pairs (indices into check.pairs), in pair order.
std::vector<std::size_t> outlier_pairs(const NetworkCheck& check);

// The pairs below --min-bandwidth (none when it was not given).
std::vector<std::size_t> pairs_below_minimum(const NetworkCheck& check);

// The one-line verdict, e.g. "host b <-> c: 0.90 Gbit/s, others 9.1 - check
// --network-interface ...", or "every pair within ...".
std::string verdict(const NetworkCheck& check);

// The median pair's bandwidth (0 without pairs): "the link bandwidth" of the job, which
// `runrun --profile` compares the achieved allreduce busbw with.
double median_pair_gbit(const NetworkCheck& check);

// The whole report: header, pair table, allreduce table, verdict, and the --min-bandwidth line.
std::string format_report(const NetworkCheck& check);

}  // namespace runrun::check_network

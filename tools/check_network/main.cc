// runrun-check-network: the worker `runrun --check-network` starts, one process per host, as a
// job of its own (same launcher, rendezvous and backend as a training job). Rank 0 prints the
// report and a last line "runrun-check-network: status ok|below-minimum" that the launcher
// reads for its exit status. Not meant to be run by hand (docs/launcher.md).
//
//   runrun-check-network --hosts a,b,c [--min-bandwidth GBITS] [--budget-s S]
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/errors.h"
#include "ops/backend_factory.h"
#include "tools/check_network/network_report.h"
#include "tools/check_network/probes.h"

namespace runrun::check_network {
namespace {

struct Arguments {
  std::vector<std::string> hosts;
  std::optional<double> min_bandwidth_gbit;
  double budget_s = 0.15;
};

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    items.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos) return items;
    start = comma + 1;
  }
}

double number(const std::string& flag, const char* text) {
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(value >= 0)) {
    throw InvalidArgumentError(RUNRUN_WHERE, flag + " must be a number >= 0, got '" + text + "'");
  }
  return value;
}

Arguments parse(int argc, char** argv) {
  Arguments arguments;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) throw InvalidArgumentError(RUNRUN_WHERE, flag + " needs a value");
    const char* value = argv[++i];
    if (flag == "--hosts") {
      arguments.hosts = split_commas(value);
    } else if (flag == "--min-bandwidth") {
      arguments.min_bandwidth_gbit = number(flag, value);
    } else if (flag == "--budget-s") {
      arguments.budget_s = number(flag, value);
    } else {
      throw InvalidArgumentError(RUNRUN_WHERE, "unknown argument '" + flag +
                                                   "' (runrun --check-network starts this "
                                                   "program; see docs/launcher.md)");
    }
  }
  if (arguments.hosts.empty()) {
    throw InvalidArgumentError(RUNRUN_WHERE, "--hosts a,b,... is required");
  }
  return arguments;
}

int run(const Arguments& arguments) {
  std::unique_ptr<Backend> all = make_backend(BackendOptions{});
  const int hosts = static_cast<int>(arguments.hosts.size());
  if (all->size() != hosts) {
    throw InvalidArgumentError(RUNRUN_WHERE, "rank " + std::to_string(all->rank()) + ": " +
                                                 std::to_string(all->size()) + " processes for " +
                                                 std::to_string(hosts) +
                                                 " hosts; runrun --check-network starts one "
                                                 "per host");
  }
  NetworkCheck check;
  check.transport = std::string(all->name());
  check.hosts = arguments.hosts;
  check.min_bandwidth_gbit = arguments.min_bandwidth_gbit;
  // Every pair in turn, alone on the network: a subgroup of its two processes, the others
  // waiting at the barrier. Each pair's numbers are then shared by a sum over everyone.
  std::vector<double> numbers;
  for (int a = 0; a < hosts; ++a) {
    for (int b = a + 1; b < hosts; ++b) {
      PairResult pair;
      pair.a = a;
      pair.b = b;
      std::unique_ptr<Backend> two = all->create_subgroup({a, b});
      if (two != nullptr) {
        const PairResult measured = probe_pair(*two, arguments.budget_s);
        if (all->rank() == a)
          pair = PairResult{a, b, measured.latency_us, measured.gbit_a_to_b, measured.gbit_b_to_a};
      }
      two.reset();
      all->barrier();
      check.pairs.push_back(pair);
      numbers.insert(numbers.end(), {pair.latency_us, pair.gbit_a_to_b, pair.gbit_b_to_a});
    }
  }
  if (!numbers.empty()) {
    all->allreduce(numbers.data(), numbers.data(), numbers.size(), DataType::kFloat64,
                   ReduceOp::kSum);
  }
  for (std::size_t i = 0; i < check.pairs.size(); ++i) {
    check.pairs[i].latency_us = numbers[3 * i];
    check.pairs[i].gbit_a_to_b = numbers[3 * i + 1];
    check.pairs[i].gbit_b_to_a = numbers[3 * i + 2];
  }
  if (hosts > 1) {
    check.allreduce = probe_allreduce(*all, {64 << 10, 1 << 20, 16 << 20}, arguments.budget_s);
  }
  all->barrier();
  if (all->rank() == 0) {
    std::cout << format_report(check) << "runrun-check-network: status "
              << (pairs_below_minimum(check).empty() ? "ok" : "below-minimum") << " link-gbit "
              << median_pair_gbit(check) << std::endl;
  }
  return 0;
}

}  // namespace
}  // namespace runrun::check_network

int main(int argc, char** argv) {
  try {
    return runrun::check_network::run(runrun::check_network::parse(argc, argv));
  } catch (const std::exception& error) {
    std::cerr << "runrun-check-network: error: " << error.what() << std::endl;
    return 1;
  }
}

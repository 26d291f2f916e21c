#include "launcher/network_check.h"

#include <cstdio>
#include <iostream>
#include <sstream>

#include "common/errors.h"

namespace runrun::launcher {
namespace {

constexpr const char* kRankZeroStdout = "[0]<stdout>:";
constexpr const char* kStatusPrefix = "runrun-check-network: status ";

std::string read_all(std::FILE* file) {
  std::string text;
  std::rewind(file);
  char chunk[4096];
  for (std::size_t n; (n = std::fread(chunk, 1, sizeof(chunk), file)) > 0;) text.append(chunk, n);
  return text;
}

std::string number_text(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

}  // namespace

LaunchOptions network_check_job(const LaunchOptions& options, const std::string& checker_path,
                                double budget_s) {
  LaunchOptions check = options;
  const auto used =
      options.num_proc > 0 ? hosts_for_processes(options.hosts, options.num_proc) : options.hosts;
  check.hosts.clear();
  std::string names;
  for (const auto& host : used) {
    check.hosts.push_back({host.name, 1});
    names += (names.empty() ? "" : ",") + host.name;
  }
  check.num_proc = static_cast<int>(check.hosts.size());
  check.command = {checker_path, "--hosts", names, "--budget-s", number_text(budget_s)};
  if (options.network_check.min_bandwidth_gbit) {
    check.command.push_back("--min-bandwidth");
    check.command.push_back(number_text(*options.network_check.min_bandwidth_gbit));
  }
  check.elastic = ElasticOptions{};
  check.output_dir.clear();
  check.dry_run = false;
  return check;
}

NetworkCheckOutput parse_network_check_output(const std::string& captured) {
  NetworkCheckOutput output;
  bool status_seen = false;
  std::istringstream lines(captured);
  const std::string prefix = kRankZeroStdout;
  for (std::string line; std::getline(lines, line);) {
    if (line.compare(0, prefix.size(), prefix) != 0) continue;
    line.erase(0, prefix.size());
    if (line.compare(0, std::string(kStatusPrefix).size(), kStatusPrefix) == 0) {
      status_seen = true;
      std::istringstream words(line.substr(std::string(kStatusPrefix).size()));
      std::string status, key;
      words >> status >> key >> output.link_gbit;
      output.below_minimum = status == "below-minimum";
    } else {
      output.report.push_back(line);
    }
  }
  if (!status_seen) {
    throw InvalidArgumentError(RUNRUN_WHERE,
                               "the network check's rank 0 printed no result "
                               "(see its messages above)");
  }
  return output;
}

int run_network_check(const LaunchOptions& options, const std::string& checker_path,
                      const CapturedJobRunner& run) {
  const LaunchOptions check =
      network_check_job(options, checker_path, options.network_check.budget_s);
  std::FILE* capture = std::tmpfile();
  if (capture == nullptr) {
    throw InvalidArgumentError(RUNRUN_WHERE,
                               "--check-network: cannot create a temporary file "
                               "for the measurement's output");
  }
  const int status = run(check, capture);
  const std::string captured = read_all(capture);
  std::fclose(capture);
  if (status != 0) {
    std::cerr << "runrun: --check-network: the measurement failed (exit status " << status
              << "; its messages are above)" << std::endl;
    return status;
  }
  const NetworkCheckOutput output = parse_network_check_output(captured);
  for (const auto& line : output.report) std::cout << line << "\n";
  std::cout.flush();
  return output.below_minimum ? kExitBelowMinBandwidth : 0;
}

double measure_link_gbit(const LaunchOptions& options, const std::string& checker_path,
                         const CapturedJobRunner& run) {
  LaunchOptions quick = options;
  quick.network_check = NetworkCheckOptions{};
  quick.network_check.budget_s = 0.05;
  const LaunchOptions check = network_check_job(quick, checker_path, quick.network_check.budget_s);
  if (check.hosts.size() < 2) return 0;
  std::FILE* capture = std::tmpfile();
  if (capture == nullptr) return 0;
  const int status = run(check, capture);
  const std::string captured = read_all(capture);
  std::fclose(capture);
  try {
    if (status == 0) {
      const double gbit = parse_network_check_output(captured).link_gbit;
      std::cerr << "runrun: --profile: link bandwidth measured for this job: " << gbit
                << " Gbit/s (median host pair)" << std::endl;
      return gbit;
    }
  } catch (const InvalidArgumentError&) {}
  std::cerr << "runrun: --profile: could not measure the link bandwidth (the quick network "
               "check failed; run runrun --check-network to see why); profiling without it"
            << std::endl;
  return 0;
}

}  // namespace runrun::launcher

#include "tests/perf/bench_options.h"

// CLI11 2.1's inline split() trips GCC 12's -Wnull-dereference (a false positive inside the
// library's own header), which -Werror would turn into a build failure.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <CLI/CLI.hpp>
#pragma GCC diagnostic pop

#include <algorithm>
#include <cctype>
#include <sstream>

#include "common/errors.h"

namespace runrun::perf {

size_t parse_bytes(const std::string& text) {
  size_t pos = 0;
  unsigned long long value = 0;
  try {
    value = std::stoull(text, &pos);
  } catch (const std::exception&) {
    pos = 0;
  }
  const std::string suffix = text.substr(pos);
  size_t scale = 0;
  if (suffix.empty() || suffix == "B") scale = 1;
  if (suffix == "K" || suffix == "KiB") scale = size_t{1} << 10;
  if (suffix == "M" || suffix == "MiB") scale = size_t{1} << 20;
  if (suffix == "G" || suffix == "GiB") scale = size_t{1} << 30;
  RUNRUN_ENFORCE(pos > 0 && scale > 0 && text[0] != '-', InvalidArgumentError,
                 "size '" + text + "' is not a byte count; write e.g. 4, 1K, 64M or 1G");
  return static_cast<size_t>(value) * scale;
}

namespace {

// "a,b,c" -> {"a", "b", "c"}; "" -> {}.
std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    if (comma > start) out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

std::vector<size_t> parse_byte_list(const std::string& text) {
  std::vector<size_t> out;
  for (const std::string& t : split_list(text)) out.push_back(parse_bytes(t));
  return out;
}

void check_cases(const std::vector<std::string>& cases) {
  for (const std::string& c : cases) {
    RUNRUN_ENFORCE(std::find(kAllCases.begin(), kAllCases.end(), c) != kAllCases.end() ||
                       std::find(kGpuCases.begin(), kGpuCases.end(), c) != kGpuCases.end(),
                   InvalidArgumentError,
                   "unknown case '" + c +
                       "'; choose among allreduce, many, resnet50, allgather, reducescatter, "
                       "alltoall, broadcast, cuda_allreduce, cuda_broadcast, cuda_allgather");
  }
}

}  // namespace

int parse_options(int argc, char** argv, bool print, BenchOptions& out) {
  CLI::App app{
      "runrun_bench: collectives through the runrun runtime vs the raw library (MPI, "
      "or gloo under `runrun --gloo`) on the same buffers. Run under mpirun, "
      "`runrun --mpi` or `runrun --gloo`; rank 0 prints."};
  std::string sizes, thresholds, cases;
  std::string many_bytes = "1K";
  app.add_flag("--json", out.json, "one JSON object per line instead of tables");
  app.add_flag("--shared-clock", out.shared_clock,
               "ranks share one clock (one host): time blocks from the last rank's start");
  app.add_option("--sizes", sizes, "bytes per op, e.g. 4,1K,64M (default: per-op range)");
  app.add_option("--iters", out.iters, "timed blocks per side")->check(CLI::Range(1, 100000));
  app.add_option("--warmup", out.warmup, "untimed blocks per side")->check(CLI::Range(0, 1000));
  app.add_option("--budget", out.budget_s, "seconds per op and size before timing stops early")
      ->check(CLI::PositiveNumber);
  app.add_option("--cases", cases,
                 "comma-separated cases: allreduce, many, resnet50, allgather, reducescatter, "
                 "alltoall, broadcast (default: all of these); cuda_allreduce, cuda_broadcast, "
                 "cuda_allgather (CUDA buffers vs raw NCCL; only when named)");
  app.add_option("--fusion-thresholds", thresholds,
                 "run the cases once per RUNRUN_FUSION_THRESHOLD value, e.g. 1M,4M,64M");
  app.add_option("--many-count", out.many_count, "tensors in the many-tensors case")
      ->check(CLI::Range(1, 100000));
  app.add_option("--many-bytes", many_bytes, "bytes of each tensor in the many-tensors case");
  std::ostringstream sink;
  try {
    app.parse(argc, argv);
    out.sizes = parse_byte_list(sizes);
    out.fusion_thresholds = parse_byte_list(thresholds);
    out.many_bytes = parse_bytes(many_bytes);
    out.cases = split_list(cases);
    check_cases(out.cases);
    if (out.cases.empty()) out.cases = kAllCases;
  } catch (const CLI::ParseError& e) {
    return print ? app.exit(e) : app.exit(e, sink, sink);
  } catch (const Error& e) {
    if (print) std::cerr << "runrun_bench: " << e.what() << "\n";
    return 2;
  }
  return -1;
}

}  // namespace runrun::perf

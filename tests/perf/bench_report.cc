#include "tests/perf/bench_report.h"

#include <fmt/core.h>

#include <cstdio>

namespace runrun::perf {
namespace {

double gbps(size_t bytes, double us) { return us > 0 ? static_cast<double>(bytes) / us / 1e3 : 0; }

std::string human_bytes(size_t bytes) {
  if (bytes >= (size_t{1} << 20) && bytes % (size_t{1} << 20) == 0) {
    return fmt::format("{}M", bytes >> 20);
  }
  if (bytes >= (size_t{1} << 10) && bytes % (size_t{1} << 10) == 0) {
    return fmt::format("{}K", bytes >> 10);
  }
  return fmt::format("{}", bytes);
}

void emit(const std::string& line) {
  std::fputs(line.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

}  // namespace

double bus_factor_for(const std::string& op, int ranks) {
  const double n = ranks;
  if (op.rfind("allreduce", 0) == 0) return 2 * (n - 1) / n;
  if (op == "broadcast") return 1;
  return (n - 1) / n;  // allgather, reducescatter, alltoall
}

void Reporter::run_info(const RunInfo& info) {
  info_ = info;
  last_op_.clear();
  if (!active_) return;
  if (json_) {
    emit(fmt::format(R"({{"op":"run","ranks":{},"backend":"{}","raw":"{}","fusion_threshold":{},)"
                     R"("cycle_time_us":{},"mpi_yield_when_idle":"{}",)"
                     R"("libnbc_iallreduce_algorithm":"{}","peer_timeout_ms":{},"timeline":{}}})",
                     info.ranks, info.backend, info.raw, info.fusion_threshold, info.cycle_time_us,
                     info.yield_when_idle, info.libnbc_iallreduce_algorithm, info.peer_timeout_ms,
                     info.timeline ? "true" : "false"));
    return;
  }
  emit(
      fmt::format("\n# runrun_bench: {} ranks, backend {}, raw side {}, fusion threshold {} B, "
                  "cycle time {} us, OMPI_MCA_mpi_yield_when_idle={}",
                  info.ranks, info.backend, info.raw, info.fusion_threshold, info.cycle_time_us,
                  info.yield_when_idle));
  emit(fmt::format("# OMPI_MCA_coll_libnbc_iallreduce_algorithm={}, peer monitor {}, timeline {}",
                   info.libnbc_iallreduce_algorithm,
                   info.peer_timeout_ms > 0 ? fmt::format("timeout {} ms", info.peer_timeout_ms)
                                            : std::string("off"),
                   info.timeline ? "on" : "off"));
}

void Reporter::table_header(const Row& row) {
  emit(fmt::format("\n## {}", row.op));
  std::string header = fmt::format("{:>10} {:>7} {:>12} {:>12} {:>12} {:>12} {:>7} {:>9} {:>9}",
                                   "bytes", "tensors", "rt_med_us", "rt_min_us", "raw_med_us",
                                   "raw_min_us", "rt/raw", "rt_busbw", "raw_busbw");
  if (row.raw_one_call) header += fmt::format(" {:>12} {:>9}", "one_call_us", "rt/one");
  if (row.fused_per_step) header += fmt::format(" {:>10}", "fused/step");
  emit(header);
}

void Reporter::row(const Row& r) {
  if (!active_) return;
  const double ratio = r.raw.median_us > 0 ? r.runtime.median_us / r.raw.median_us : 0;
  const double algbw = gbps(r.bytes, r.runtime.median_us);
  const double raw_algbw = gbps(r.bytes, r.raw.median_us);
  if (json_) {
    std::string line = fmt::format(
        R"({{"op":"{}","bytes":{},"tensors":{},"ranks":{},"fusion_threshold":{},"iters":{},)"
        R"("runtime_us":{:.6g},"runtime_min_us":{:.6g},"raw_us":{:.6g},"raw_min_us":{:.6g},)"
        R"("ratio":{:.6g},"algbw":{:.6g},"busbw":{:.6g},"raw_algbw":{:.6g},"raw_busbw":{:.6g})",
        r.op, r.bytes, r.tensors, info_.ranks, info_.fusion_threshold, r.runtime.samples,
        r.runtime.median_us, r.runtime.min_us, r.raw.median_us, r.raw.min_us, ratio, algbw,
        algbw * r.bus_factor, raw_algbw, raw_algbw * r.bus_factor);
    if (r.raw_one_call) {
      line += fmt::format(R"(,"raw_one_call_us":{:.6g},"raw_one_call_min_us":{:.6g})",
                          r.raw_one_call->median_us, r.raw_one_call->min_us);
    }
    if (r.fused_per_step) line += fmt::format(R"(,"fused_per_step":{:.6g})", *r.fused_per_step);
    emit(line + "}");
    return;
  }
  if (r.op != last_op_) table_header(r);
  last_op_ = r.op;
  std::string line = fmt::format(
      "{:>10} {:>7} {:>12.1f} {:>12.1f} {:>12.1f} {:>12.1f} {:>7.2f} {:>9.3f} {:>9.3f}",
      human_bytes(r.bytes), r.tensors, r.runtime.median_us, r.runtime.min_us, r.raw.median_us,
      r.raw.min_us, ratio, algbw * r.bus_factor, raw_algbw * r.bus_factor);
  if (r.raw_one_call) {
    const double one = r.raw_one_call->median_us;
    line += fmt::format(" {:>12.1f} {:>9.2f}", one, one > 0 ? r.runtime.median_us / one : 0);
  }
  if (r.fused_per_step) line += fmt::format(" {:>10.2f}", *r.fused_per_step);
  emit(line);
}

}  // namespace runrun::perf

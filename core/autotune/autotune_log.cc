#include "core/autotune/autotune_log.h"

#include <cerrno>
#include <cstring>

namespace runrun {

const char* AutotuneLog::header() {
  return "sample,kind,round,fusion_threshold_bytes,cycle_time_ms,hierarchical_allreduce,bytes,"
         "seconds,score_bytes_per_s";
}

bool AutotuneLog::open(const std::string& path, std::string* error) {
  out_.open(path, std::ios::out | std::ios::trunc);
  if (!out_.is_open()) {
    if (error != nullptr) *error = std::strerror(errno);
    return false;
  }
  out_ << header() << '\n';
  out_.flush();
  return true;
}

void AutotuneLog::row(int64_t sample, const std::string& kind, uint64_t round,
                      const TunedParameters& p, uint64_t bytes, double seconds, double score) {
  if (!out_.is_open()) return;
  out_ << sample << ',' << kind << ',' << round << ',' << p.fusion_threshold << ','
       << static_cast<double>(p.cycle_time.count()) / 1000.0 << ',' << (p.hierarchical ? 1 : 0)
       << ',' << bytes << ',' << seconds << ',' << score << '\n';
  out_.flush();
}

}  // namespace runrun

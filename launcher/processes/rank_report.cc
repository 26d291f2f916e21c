#include "launcher/processes/rank_report.h"

#include <charconv>
#include <cstring>
#include <sstream>

namespace runrun::launcher {
namespace {

// Every kind with its name on the wire: one table for writing and reading events.
struct KindName {
  RankEvent::Kind kind;
  const char* name;
};
constexpr KindName kKindNames[] = {
    {RankEvent::Kind::kStarted, "started"},   {RankEvent::Kind::kExited, "exited"},
    {RankEvent::Kind::kSignaled, "signaled"}, {RankEvent::Kind::kStopped, "stopped"},
    {RankEvent::Kind::kPeerLost, "lost"},     {RankEvent::Kind::kPeerLeft, "left"},
    {RankEvent::Kind::kPeerSilent, "silent"}, {RankEvent::Kind::kInitFailed, "initfailed"},
};

const char* kind_name(RankEvent::Kind kind) {
  for (const KindName& entry : kKindNames) {
    if (entry.kind == kind) return entry.name;
  }
  return "?";
}

bool parse_int(std::string_view text, int* value) {
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return ec == std::errc() && ptr == text.data() + text.size();
}

}  // namespace

std::string format_rank_event(const RankEvent& event) {
  return std::string(kRankMarker) + " " + kind_name(event.kind) + " " + std::to_string(event.rank) +
         " " + std::to_string(event.value) + "\n";
}

std::optional<RankEvent> find_rank_event(std::string_view line, std::string* rest) {
  const auto at = line.find(kRankMarker);
  if (at == std::string_view::npos) return std::nullopt;
  std::istringstream fields{std::string(line.substr(at + kRankMarker.size()))};
  std::string kind, rank, value;
  fields >> kind >> rank >> value;
  RankEvent event;
  bool known = false;
  for (const KindName& entry : kKindNames) {
    if (kind == entry.name) {
      event.kind = entry.kind;
      known = true;
    }
  }
  if (!known || !parse_int(rank, &event.rank) || !parse_int(value, &event.value)) {
    return std::nullopt;
  }
  *rest = std::string(line.substr(0, at));
  return event;
}

std::string describe_rank_end(const RankEvent& event) {
  if (event.kind == RankEvent::Kind::kSignaled) {
    const char* name = strsignal(event.value);
    return "signal " + std::to_string(event.value) + " (" + (name ? name : "unknown") + ")";
  }
  return "exit code " + std::to_string(event.value);
}

}  // namespace runrun::launcher

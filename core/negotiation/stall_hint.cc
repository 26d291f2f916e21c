#include "core/negotiation/stall_hint.h"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace runrun {
namespace {

// `name` without its numbers: each run of digits goes, with one '_' right before it ("dense_1"
// and "dense" are one name made from a counter, as Keras makes layer names unique).
std::string without_numbers(const std::string& name) {
  std::string out;
  out.reserve(name.size());
  for (size_t i = 0; i < name.size(); ++i) {
    const bool digit = std::isdigit(static_cast<unsigned char>(name[i])) != 0;
    const bool underscore_before_digit = name[i] == '_' && i + 1 < name.size() &&
                                         std::isdigit(static_cast<unsigned char>(name[i + 1]));
    if (!digit && !underscore_before_digit) out.push_back(name[i]);
  }
  return out;
}

size_t common_prefix(const std::string& a, const std::string& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

// True when every rank in `ranks` submitted `row` (is not among its missing ranks).
bool submitted_by_all(const MessageTable::Waiting& row, const std::vector<int>& ranks) {
  return std::none_of(ranks.begin(), ranks.end(), [&](int rank) {
    return std::find(row.missing_ranks.begin(), row.missing_ranks.end(), rank) !=
           row.missing_ranks.end();
  });
}

std::string rank_list(const std::vector<int>& ranks) {
  std::ostringstream out;
  for (size_t i = 0; i < ranks.size(); ++i) out << (i ? ", " : "") << ranks[i];
  return out.str();
}

}  // namespace

bool names_differ_only_in_numbers(const std::string& a, const std::string& b) {
  return a != b && without_numbers(a) == without_numbers(b);
}

std::string stall_hint(const MessageTable::Waiting& stalled,
                       const std::vector<MessageTable::Waiting>& waiting) {
  if (stalled.missing_ranks.empty()) return "";
  const MessageTable::Waiting* best = nullptr;
  size_t best_prefix = 0;
  size_t others = 0;
  for (const MessageTable::Waiting& row : waiting) {
    if (row.name == stalled.name || !submitted_by_all(row, stalled.missing_ranks)) continue;
    ++others;
    const size_t prefix = common_prefix(row.name, stalled.name);
    if (!best || prefix > best_prefix) {
      best = &row;
      best_prefix = prefix;
    }
  }
  if (!best) return "";
  std::string hint =
      " Meanwhile ranks [" + rank_list(stalled.missing_ranks) + "] submitted '" + best->name + "'";
  if (others > 1) hint += " (and " + std::to_string(others - 1) + " other tensors)";
  hint += ", which ranks [" + rank_list(best->missing_ranks) + "] have not";
  if (names_differ_only_in_numbers(stalled.name, best->name)) {
    hint +=
        ": the two names differ only in their numbers, as names made from a per-process counter "
        "do (an unnamed op, or a layer that Keras named 'name_1' on a rank that built one more "
        "layer or model); give the op or the layer an explicit name.";
  } else {
    hint += ": if they are the same tensor, its name differs between ranks.";
  }
  return hint;
}

std::string stall_deadline_text(std::chrono::seconds shutdown_time,
                                std::chrono::steady_clock::duration age) {
  const std::string name = "RUNRUN_STALL_SHUTDOWN_TIME";
  if (shutdown_time.count() == 0) {
    return name +
           "=0: the ranks wait for ever; set it to a number of seconds to end such a "
           "stall with an error on every rank.";
  }
  const auto left = std::max<int64_t>(
      0, (shutdown_time - std::chrono::duration_cast<std::chrono::seconds>(age)).count());
  return "The job ends in " + std::to_string(left) +
         " s unless the ranks catch up: these ops "
         "then fail on every rank (" +
         name + "=" + std::to_string(shutdown_time.count()) +
         " s; raise it where one rank legitimately works alone that long, e.g. evaluating or "
         "checkpointing, or 0 to wait for ever).";
}

}  // namespace runrun

#include "common/slurm_lists.h"

#include <charconv>
#include <cstddef>

#include "common/errors.h"

namespace runrun::slurm {
namespace {

// Bound on what a list may expand to: far above any cluster, low enough that a typo such as
// "n[1-999999999]" is an error instead of gigabytes of names.
constexpr std::size_t kMaxExpanded = 1 << 20;

[[noreturn]] void malformed(std::string_view origin, std::string_view text,
                            const std::string& why) {
  throw InvalidArgumentError(RUNRUN_WHERE, std::string(origin) + "='" + std::string(text) +
                                               "' is not a Slurm list: " + why);
}

// Splits at commas that are outside brackets.
std::vector<std::string_view> top_level_items(std::string_view text, std::string_view origin) {
  std::vector<std::string_view> items;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : ',';
    if (c == '[') ++depth;
    if (c == ']' && --depth < 0) malformed(origin, text, "a ']' without its '['");
    if (depth > 1) malformed(origin, text, "nested '['");
    if (c == ',' && depth == 0) {
      if (i == start) malformed(origin, text, "an empty entry");
      items.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  if (depth != 0) malformed(origin, text, "a '[' without its ']'");
  return items;
}

unsigned long parse_number(std::string_view digits, std::string_view origin,
                           std::string_view text) {
  unsigned long value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
    malformed(origin, text, "'" + std::string(digits) + "' is not a number");
  }
  return value;
}

std::string padded(unsigned long value, std::size_t width) {
  std::string digits = std::to_string(value);
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

// The names of one bracket's contents ("01-04,07"), as strings with their padding.
std::vector<std::string> range_values(std::string_view ranges, std::string_view origin,
                                      std::string_view text) {
  std::vector<std::string> values;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= ranges.size(); ++i) {
    if (i < ranges.size() && ranges[i] != ',') continue;
    const std::string_view part = ranges.substr(start, i - start);
    start = i + 1;
    const std::size_t dash = part.find('-');
    const std::string_view low = part.substr(0, dash);
    const std::string_view high = dash == std::string_view::npos ? low : part.substr(dash + 1);
    const unsigned long first = parse_number(low, origin, text);
    const unsigned long last = parse_number(high, origin, text);
    if (last < first) malformed(origin, text, "the range '" + std::string(part) + "' goes down");
    if (last - first >= kMaxExpanded - values.size()) {
      malformed(origin, text, "the range '" + std::string(part) + "' is too long");
    }
    for (unsigned long value = first; value <= last; ++value)
      values.push_back(padded(value, low.size()));
  }
  return values;
}

// Expands one entry ("rack[1-2]-n[01-02]") into `out`: every combination, leftmost range slowest.
void expand_entry(std::string_view entry, std::string_view origin, std::string_view text,
                  std::vector<std::string>& out) {
  std::vector<std::string> names{""};
  std::size_t i = 0;
  while (i < entry.size()) {
    const std::size_t open = entry.find('[', i);
    const std::string_view literal =
        entry.substr(i, open == std::string_view::npos ? std::string_view::npos : open - i);
    for (auto& name : names) name += literal;
    if (open == std::string_view::npos) break;
    const std::size_t close = entry.find(']', open);
    const auto values = range_values(entry.substr(open + 1, close - open - 1), origin, text);
    if (names.size() * values.size() > kMaxExpanded)
      malformed(origin, text, "it lists too many hosts");
    std::vector<std::string> combined;
    combined.reserve(names.size() * values.size());
    for (const auto& name : names) {
      for (const auto& value : values) combined.push_back(name + value);
    }
    names = std::move(combined);
    i = close + 1;
  }
  for (auto& name : names) {
    if (name.empty()) malformed(origin, text, "an empty host name");
    out.push_back(std::move(name));
  }
  if (out.size() > kMaxExpanded) malformed(origin, text, "it lists too many hosts");
}

}  // namespace

std::vector<std::string> expand_host_list(std::string_view text, std::string_view origin) {
  if (text.empty()) malformed(origin, text, "it is empty");
  std::vector<std::string> hosts;
  for (const auto entry : top_level_items(text, origin)) expand_entry(entry, origin, text, hosts);
  return hosts;
}

std::vector<int> expand_counts(std::string_view text, std::string_view origin) {
  if (text.empty()) malformed(origin, text, "it is empty");
  std::vector<int> counts;
  for (const auto item : top_level_items(text, origin)) {
    const std::size_t paren = item.find("(x");
    const std::string_view count_text = item.substr(0, paren);
    unsigned long repeat = 1;
    if (paren != std::string_view::npos) {
      if (item.back() != ')') malformed(origin, text, "'" + std::string(item) + "' lacks its ')'");
      repeat = parse_number(item.substr(paren + 2, item.size() - paren - 3), origin, text);
    }
    const unsigned long count = parse_number(count_text, origin, text);
    if (count == 0 || count > (1UL << 20))
      malformed(origin, text, "a count of " + std::to_string(count));
    if (repeat == 0 || counts.size() + repeat > kMaxExpanded)
      malformed(origin, text, "a repeat of " + std::to_string(repeat));
    counts.insert(counts.end(), repeat, static_cast<int>(count));
  }
  return counts;
}

}  // namespace runrun::slurm

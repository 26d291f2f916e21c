#include "launcher/hosts/host_list.h"

#include <charconv>
#include <fstream>
#include <sstream>

#include "common/errors.h"

namespace runrun::launcher {
namespace {

constexpr int kMaxSlots = 1 << 20;

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r");
  return s.substr(first, last - first + 1);
}

bool valid_host_char(char c, bool in_brackets) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  if (c == '-' || c == '.' || c == '_') return true;
  return in_brackets && (c == ':' || c == '%');
}

// Returns "" when `text` is a positive slot count (stored in *slots), else the reason.
std::string parse_slots(std::string_view text, int* slots) {
  int value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) {
    return "slots must be a positive integer, got '" + std::string(text) + "'";
  }
  if (value < 1 || value > kMaxSlots) {
    return "slots must be between 1 and " + std::to_string(kMaxSlots) + ", got " +
           std::string(text);
  }
  *slots = value;
  return {};
}

// Parses `host`, `host:N`, `[v6]`, `[v6]:N`. Returns "" or the reason it is malformed.
std::string parse_entry(std::string_view entry, HostSlots* out) {
  std::string_view name = entry;
  std::string_view slots_text;
  bool bracketed = false;
  if (!entry.empty() && entry.front() == '[') {
    const auto close = entry.find(']');
    if (close == std::string_view::npos) return "'[' without a closing ']'";
    name = entry.substr(1, close - 1);
    const auto rest = entry.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return "expected ':N' after ']'";
      slots_text = rest.substr(1);
      if (slots_text.empty()) return "':' must be followed by the number of slots";
    }
    bracketed = true;
  } else {
    const auto colon = entry.find(':');
    if (colon != std::string_view::npos) {
      if (entry.find(':', colon + 1) != std::string_view::npos) {
        return "more than one ':' (write IPv6 addresses in brackets: [::1]:2)";
      }
      name = entry.substr(0, colon);
      slots_text = entry.substr(colon + 1);
      if (slots_text.empty()) return "':' must be followed by the number of slots";
    }
  }
  if (name.empty()) return "the host name is empty";
  for (char c : name) {
    if (!valid_host_char(c, bracketed)) {
      return std::string("the host name contains '") + c + "'";
    }
  }
  out->name = std::string(name);
  out->slots = 1;
  if (!slots_text.empty()) return parse_slots(slots_text, &out->slots);
  return {};
}

// True for `host:N` and `[v6]:N` (an entry already validated by parse_entry).
bool has_slot_suffix(std::string_view entry) {
  const auto close = entry.rfind(']');
  const auto colon = entry.rfind(':');
  return colon != std::string_view::npos && (close == std::string_view::npos || colon > close);
}

[[noreturn]] void throw_invalid(const std::string& message) {
  throw InvalidArgumentError(RUNRUN_WHERE, message);
}

}  // namespace

std::vector<HostSlots> parse_host_list(std::string_view text) {
  if (trim(text).empty()) {
    throw_invalid("-H/--hosts is empty: give host:slots entries, e.g. -H server1:4,server2:4");
  }
  std::vector<HostSlots> hosts;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    const auto entry = trim(text.substr(start, comma - start));
    HostSlots host;
    const std::string why = entry.empty() ? "empty entry" : parse_entry(entry, &host);
    if (!why.empty()) {
      throw_invalid("-H/--hosts entry '" + std::string(entry) + "' in '" + std::string(text) +
                    "' is malformed: " + why + "; expected host or host:slots, e.g. server1:4");
    }
    hosts.push_back(std::move(host));
    start = comma + 1;
  }
  return hosts;
}

std::vector<HostSlots> parse_hostfile(std::string_view content, std::string_view source,
                                      int default_slots) {
  std::vector<HostSlots> hosts;
  std::istringstream lines{std::string(content)};
  std::string raw;
  int line_number = 0;
  while (std::getline(lines, raw)) {
    ++line_number;
    std::string_view line = raw;
    line = trim(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    const auto fail = [&](const std::string& why) {
      throw_invalid("hostfile " + std::string(source) + " line " + std::to_string(line_number) +
                    " '" + std::string(trim(raw)) + "' is malformed: " + why +
                    "; expected 'host slots=N' or 'host:N'");
    };
    const auto space = line.find_first_of(" \t");
    HostSlots host;
    std::string why = parse_entry(line.substr(0, space), &host);
    if (!why.empty()) fail(why);
    if (!has_slot_suffix(line.substr(0, space))) host.slots = default_slots;
    if (space != std::string_view::npos) {
      const auto attribute = trim(line.substr(space));
      if (has_slot_suffix(line.substr(0, space))) fail("slots given twice (':N' and 'slots=')");
      if (attribute.substr(0, 6) != "slots=") {
        fail("unknown attribute '" + std::string(attribute) + "'");
      }
      why = parse_slots(attribute.substr(6), &host.slots);
      if (!why.empty()) fail(why);
    }
    hosts.push_back(std::move(host));
  }
  if (hosts.empty()) {
    throw_invalid("hostfile " + std::string(source) +
                  " lists no host: add lines like 'server1 slots=4'");
  }
  return hosts;
}

std::vector<HostSlots> read_hostfile(const std::string& path) {
  std::ifstream file(path);
  if (!file) {
    throw_invalid("cannot read hostfile '" + path + "': check the path and its permissions");
  }
  std::stringstream content;
  content << file.rdbuf();
  return parse_hostfile(content.str(), path);
}

int total_slots(const std::vector<HostSlots>& hosts) {
  long long total = 0;
  for (const auto& host : hosts) total += host.slots;
  return total > kMaxSlots ? kMaxSlots : static_cast<int>(total);
}

std::vector<HostSlots> hosts_for_processes(const std::vector<HostSlots>& hosts, int num_proc) {
  std::vector<HostSlots> used;
  int left = num_proc;
  for (const auto& host : hosts) {
    if (left <= 0) break;
    const int take = host.slots < left ? host.slots : left;
    used.push_back({host.name, take});
    left -= take;
  }
  return used;
}

std::string format_host_list(const std::vector<HostSlots>& hosts) {
  std::string out;
  for (const auto& host : hosts) {
    if (!out.empty()) out += ',';
    const bool v6 = host.name.find(':') != std::string::npos;
    out += v6 ? "[" + host.name + "]" : host.name;
    out += ':' + std::to_string(host.slots);
  }
  return out;
}

}  // namespace runrun::launcher

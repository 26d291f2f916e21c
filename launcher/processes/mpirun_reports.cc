#include "launcher/processes/mpirun_reports.h"

namespace runrun::launcher {
namespace {

// "[host:pid] " at the start of `line`: where the text after it begins, or npos.
std::size_t after_process_tag(const std::string& line) {
  if (line.empty() || line[0] != '[') return std::string::npos;
  const std::size_t close = line.find("] ");
  if (close == std::string::npos || line.find(':') > close) return std::string::npos;
  return close + 2;
}

bool tagged_line_is(const std::string& line, const std::string& text) {
  const std::size_t start = after_process_tag(line);
  return start != std::string::npos && line.compare(start, std::string::npos, text) == 0;
}

std::string trim(const std::string& text) {
  const std::size_t first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") + 1 - first);
}

std::string short_name(const std::string& name) { return name.substr(0, name.find('.')); }

}  // namespace

bool starts_crash_report(const std::string& line) {
  return tagged_line_is(line, "*** Process received signal ***");
}

bool ends_crash_report(const std::string& line) {
  return tagged_line_is(line, "*** End of error message ***");
}

std::string crash_signal(const std::vector<std::string>& report) {
  for (const auto& line : report) {
    const std::size_t start = after_process_tag(line);
    if (start != std::string::npos && line.compare(start, 8, "Signal: ") == 0) {
      return trim(line.substr(start + 8));
    }
  }
  return "a signal";
}

std::optional<std::string> lost_daemon_node(const std::vector<std::string>& box) {
  bool lost = false;
  for (const auto& line : box) {
    if (line.find("has lost communication with a remote daemon") != std::string::npos) {
      lost = true;
    }
    const std::size_t label = line.find("Remote daemon:");
    const std::size_t on_node = line.rfind(" on node ");
    if (lost && label != std::string::npos && on_node != std::string::npos && on_node > label) {
      const std::string node = trim(line.substr(on_node + 9));
      if (!node.empty()) return node;
    }
  }
  return std::nullopt;
}

int host_index_of_node(const std::string& node, const std::vector<std::string>& host_labels) {
  for (std::size_t i = 0; i < host_labels.size(); ++i) {
    if (host_labels[i] == node) return static_cast<int>(i);
  }
  for (std::size_t i = 0; i < host_labels.size(); ++i) {
    if (short_name(host_labels[i]) == short_name(node)) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace runrun::launcher

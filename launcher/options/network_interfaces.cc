#include "launcher/options/network_interfaces.h"

#include <algorithm>

namespace runrun::launcher {

std::string join_interfaces(const std::vector<std::string>& given) {
  std::vector<std::string> items;
  for (const std::string& value : given) {
    for (std::size_t start = 0; start <= value.size();) {
      const std::size_t comma = std::min(value.find(',', start), value.size());
      std::string item = value.substr(start, comma - start);
      if (std::find(items.begin(), items.end(), item) == items.end()) items.push_back(item);
      start = comma + 1;
    }
  }
  std::string joined;
  for (const auto& item : items) joined += (joined.empty() ? "" : ",") + item;
  return joined;
}

std::string interface_names(const std::string& spec) {
  std::string names;
  for (std::size_t start = 0; !spec.empty() && start <= spec.size();) {
    const std::size_t comma = std::min(spec.find(',', start), spec.size());
    const std::string item = spec.substr(start, comma - start);
    if (!item.empty() && item.find('/') == std::string::npos) {
      names += (names.empty() ? "" : ",") + item;
    }
    start = comma + 1;
  }
  return names;
}

}  // namespace runrun::launcher

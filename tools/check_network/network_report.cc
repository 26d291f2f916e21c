#include "tools/check_network/network_report.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace runrun::check_network {
namespace {

std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", decimals, value);
  return text;
}

// Bandwidths print with 3 significant digits or so: 0.0512, 0.905, 9.12, 91.2.
std::string gbit(double value) {
  return fixed(value, value < 0.1 ? 4 : value < 1 ? 3 : value < 10 ? 2 : 1);
}

std::string size_text(std::size_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::string pad(std::string text, std::size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

std::string trimmed(std::string line) {
  line.erase(line.find_last_not_of(' ') + 1);
  return line;
}

std::string pair_name(const NetworkCheck& check, const PairResult& pair) {
  return check.hosts[static_cast<std::size_t>(pair.a)] + " <-> " +
         check.hosts[static_cast<std::size_t>(pair.b)];
}

// The host that every outlier pair includes, when every pair of that host is an outlier and
// there are at least two of them (then the host, not a link, is the likely culprit); else -1.
int slow_host(const NetworkCheck& check, const std::vector<std::size_t>& outliers) {
  const int hosts = static_cast<int>(check.hosts.size());
  if (hosts < 3 || outliers.size() != static_cast<std::size_t>(hosts - 1)) return -1;
  for (int host = 0; host < hosts; ++host) {
    const bool in_all = std::all_of(outliers.begin(), outliers.end(), [&](std::size_t i) {
      return check.pairs[i].a == host || check.pairs[i].b == host;
    });
    if (in_all) return host;
  }
  return -1;
}

}  // namespace

std::vector<std::size_t> outlier_pairs(const NetworkCheck& check) {
  std::vector<double> sorted;
  for (const auto& pair : check.pairs) sorted.push_back(pair.gbit());
  std::sort(sorted.begin(), sorted.end());
  double widest = 0, below = 0;  // the widest gap's factor, and the value below it
  for (std::size_t i = 0; i + 1 < sorted.size(); ++i) {
    const double gap = sorted[i] > 0 ? sorted[i + 1] / sorted[i] : (sorted[i + 1] > 0 ? 1e300 : 1);
    if (gap > widest) {
      widest = gap;
      below = sorted[i];
    }
  }
  std::vector<std::size_t> outliers;
  if (widest < kOutlierGap) return outliers;
  for (std::size_t i = 0; i < check.pairs.size(); ++i) {
    if (check.pairs[i].gbit() <= below) outliers.push_back(i);
  }
  return outliers;
}

std::vector<std::size_t> pairs_below_minimum(const NetworkCheck& check) {
  std::vector<std::size_t> below;
  if (!check.min_bandwidth_gbit) return below;
  for (std::size_t i = 0; i < check.pairs.size(); ++i) {
    if (check.pairs[i].gbit() < *check.min_bandwidth_gbit) below.push_back(i);
  }
  return below;
}

std::string verdict(const NetworkCheck& check) {
  if (check.pairs.empty()) {
    return "one host: no host pair to measure (name two or more hosts with -H or --hostfile)";
  }
  const auto outliers = outlier_pairs(check);
  std::vector<double> all, others;
  const std::set<std::size_t> slow(outliers.begin(), outliers.end());
  for (std::size_t i = 0; i < check.pairs.size(); ++i) {
    all.push_back(check.pairs[i].gbit());
    if (slow.count(i) == 0) others.push_back(check.pairs[i].gbit());
  }
  if (outliers.empty()) {
    const auto [low, high] = std::minmax_element(all.begin(), all.end());
    return check.pairs.size() == 1
               ? "one pair: " + gbit(*low) + " Gbit/s"
               : "no outlier: every pair between " + gbit(*low) + " and " + gbit(*high) + " Gbit/s";
  }
  const std::string rest = "others " + gbit(median(others)) + " Gbit/s";
  const int host = slow_host(check, outliers);
  if (host >= 0) {
    std::vector<double> values;
    for (std::size_t i : outliers) values.push_back(check.pairs[i].gbit());
    const auto [low, high] = std::minmax_element(values.begin(), values.end());
    const std::string& name = check.hosts[static_cast<std::size_t>(host)];
    return "host " + name + " is slow with every other host: " + gbit(*low) + " - " + gbit(*high) +
           " Gbit/s, " + rest + " - check " + name +
           "'s interface (--network-interface) and its link";
  }
  std::string text;
  for (std::size_t i : outliers) {
    if (!text.empty()) text += ", ";
    text +=
        "host " + pair_name(check, check.pairs[i]) + ": " + gbit(check.pairs[i].gbit()) + " Gbit/s";
  }
  return text + ", " + rest + " - check --network-interface and the link between " +
         (outliers.size() == 1 ? "them" : "each of them");
}

double median_pair_gbit(const NetworkCheck& check) {
  std::vector<double> values;
  for (const auto& pair : check.pairs) values.push_back(pair.gbit());
  return median(values);
}

std::string format_report(const NetworkCheck& check) {
  std::string out = "runrun --check-network: " + std::to_string(check.hosts.size()) +
                    " host(s), one process each, over " + check.transport + "\n";
  if (!check.pairs.empty()) {
    std::size_t width = 10;
    for (const auto& pair : check.pairs) width = std::max(width, pair_name(check, pair).size());
    width += 2;
    out += "\n" + pad("host pair", width) + pad("latency (us)", 14) + pad("Gbit/s ->", 11) +
           "Gbit/s <-\n";
    const auto outliers = outlier_pairs(check);
    const auto below = pairs_below_minimum(check);
    for (std::size_t i = 0; i < check.pairs.size(); ++i) {
      const auto& pair = check.pairs[i];
      std::string mark;
      if (std::find(outliers.begin(), outliers.end(), i) != outliers.end()) mark += " outlier";
      if (std::find(below.begin(), below.end(), i) != below.end()) mark += " below-minimum";
      const std::string row = pad(pair_name(check, pair), width) +
                              pad(fixed(pair.latency_us, 1), 14) + pad(gbit(pair.gbit_a_to_b), 11) +
                              pad(gbit(pair.gbit_b_to_a), 11);
      out += mark.empty() ? trimmed(row) + "\n" : row + " <-" + mark + "\n";
    }
  }
  if (!check.allreduce.empty()) {
    out += "\nallreduce across all " + std::to_string(check.hosts.size()) + " hosts (float32)\n" +
           pad("size", 10) + pad("time (ms)", 12) + pad("algbw Gbit/s", 14) + "busbw Gbit/s\n";
    for (const auto& row : check.allreduce) {
      out += pad(size_text(row.bytes), 10) + pad(fixed(row.seconds * 1e3, 3), 12) +
             pad(gbit(row.algbw_gbit), 14) + gbit(row.busbw_gbit) + "\n";
    }
  }
  out += "\nverdict: " + verdict(check) + "\n";
  const auto below = pairs_below_minimum(check);
  if (!below.empty()) {
    std::string names;
    for (std::size_t i : below) {
      if (!names.empty()) names += ", ";
      names += pair_name(check, check.pairs[i]) + " (" + gbit(check.pairs[i].gbit()) + ")";
    }
    out += "below --min-bandwidth " + gbit(*check.min_bandwidth_gbit) + " Gbit/s: " + names + "\n";
  }
  return out;
}

}  // namespace runrun::check_network

#include "launcher/options/horovod_config_file.h"

#include <array>
#include <cctype>
#include <charconv>
#include <fstream>
#include <map>
#include <sstream>

#include "common/errors.h"
#include "launcher/options/yaml_mapping.h"

namespace runrun::launcher {
namespace {

enum class Kind {
  kWhole,   // a whole number, e.g. 64
  kNumber,  // a number, e.g. 2.5
  kText,    // any scalar
  kSwitch,  // a boolean: on_flag when true, off_flag when false
};

// One setting of Horovod's config file and the horovodrun flag(s) of the same meaning.
struct Setting {
  std::string_view section, key;
  Kind kind;
  std::string_view on_flag;   // the flag (kSwitch: when true)
  std::string_view off_flag;  // kSwitch: the flag when false
};

constexpr std::array<Setting, 19> kSettings = {{
    {"params", "fusion_threshold_mb", Kind::kWhole, "--fusion-threshold-mb", ""},
    {"params", "cycle_time_ms", Kind::kNumber, "--cycle-time-ms", ""},
    {"params", "cache_capacity", Kind::kWhole, "--cache-capacity", ""},
    {"params", "hierarchical_allreduce", Kind::kSwitch, "--hierarchical-allreduce",
     "--no-hierarchical-allreduce"},
    {"params", "hierarchical_allgather", Kind::kSwitch, "--hierarchical-allgather",
     "--no-hierarchical-allgather"},
    {"autotune", "log_file", Kind::kText, "--autotune-log-file", ""},
    {"autotune", "warmup_samples", Kind::kWhole, "--autotune-warmup-samples", ""},
    {"autotune", "steps_per_sample", Kind::kWhole, "--autotune-steps-per-sample", ""},
    {"autotune", "bayes_opt_max_samples", Kind::kWhole, "--autotune-bayes-opt-max-samples", ""},
    {"autotune", "gaussian_process_noise", Kind::kNumber, "--autotune-gaussian-process-noise", ""},
    {"timeline", "filename", Kind::kText, "--timeline-filename", ""},
    {"timeline", "mark_cycles", Kind::kSwitch, "--timeline-mark-cycles",
     "--no-timeline-mark-cycles"},
    {"stall_check", "enabled", Kind::kSwitch, "--stall-check", "--no-stall-check"},
    {"stall_check", "warning_time_seconds", Kind::kWhole, "--stall-check-warning-time-seconds", ""},
    {"stall_check", "shutdown_time_seconds", Kind::kWhole, "--stall-check-shutdown-time-seconds",
     ""},
    {"library_options", "mpi_threads_disable", Kind::kSwitch, "--mpi-threads-disable",
     "--no-mpi-threads-disable"},
    {"library_options", "num_nccl_streams", Kind::kWhole, "--num-nccl-streams", ""},
    {"library_options", "gloo_timeout_seconds", Kind::kWhole, "--gloo-timeout-seconds", ""},
    {"logging", "level", Kind::kText, "--log-level", ""},
}};

std::string read_file(const std::string& path) {
  std::ifstream file(path);
  if (!file) {
    throw InvalidArgumentError(RUNRUN_WHERE, "--config-file '" + path +
                                                 "' cannot be read: check the path and its "
                                                 "permissions");
  }
  std::stringstream content;
  content << file.rdbuf();
  return content.str();
}

std::string name_of(const YamlEntry& entry) {
  return entry.section.empty() ? entry.key : entry.section + "." + entry.key;
}

class ConfigReader {
 public:
  ConfigReader(std::string path, const std::function<bool(std::string_view)>& given)
      : path_(std::move(path)), given_(given) {}

  [[noreturn]] void fail(const YamlEntry& entry, const std::string& why) const {
    throw InvalidArgumentError(RUNRUN_WHERE, "--config-file " + path_ + " line " +
                                                 std::to_string(entry.line) + ": " +
                                                 name_of(entry) + " " + why);
  }

  // The flag words of `entry` for `setting`, or none.
  void add(const Setting& setting, const YamlEntry& entry, std::vector<std::string>& words) const {
    if (entry.null) return;  // no value: as if absent
    if (setting.kind == Kind::kSwitch) {
      bool on = false;
      if (!yaml_bool(entry, &on)) fail(entry, "'" + entry.value + "' is not true or false");
      if (given_(setting.on_flag) || given_(setting.off_flag)) return;
      words.emplace_back(on ? setting.on_flag : setting.off_flag);
      return;
    }
    if (given_(setting.on_flag)) return;
    if (setting.kind != Kind::kText) {
      double number = 0;
      const auto* end = entry.value.data() + entry.value.size();
      const auto [ptr, ec] = std::from_chars(entry.value.data(), end, number);
      const bool whole = entry.value.find_first_not_of("0123456789-") == std::string::npos;
      if (entry.quoted || ec != std::errc() || ptr != end ||
          (setting.kind == Kind::kWhole && !whole)) {
        fail(entry, "'" + entry.value + "' is not " +
                        (setting.kind == Kind::kWhole ? "a whole number" : "a number"));
      }
    }
    words.emplace_back(setting.on_flag);
    words.push_back(entry.value);
  }

  ConfigFileFlags read() const {
    // The last of a key wins, as in PyYAML.
    std::map<std::string, YamlEntry> by_name;
    for (auto& entry : read_yaml_mapping(read_file(path_), "--config-file " + path_)) {
      by_name[name_of(entry)] = std::move(entry);
    }
    ConfigFileFlags flags;
    const bool autotune = autotune_on(by_name);
    for (const auto& [name, entry] : by_name) {
      const Setting* setting = find_setting(entry);
      if (setting != nullptr && setting->section == "autotune" && !autotune) continue;
      if (setting != nullptr) {
        add(*setting, entry, flags.words);
      } else if (name == "controller") {
        add_controller(entry, flags.words);
      } else if (name == "logging.with_timestamp") {
        bool on = false;
        if (!yaml_bool(entry, &on)) fail(entry, "'" + entry.value + "' is not true or false");
        if (!given_("--log-with-timestamp") && !given_("--log-without-timestamp")) {
          flags.words.emplace_back(on ? "--log-with-timestamp" : "--log-without-timestamp");
        }
      } else if (name == "autotune.enabled") {
        if (autotune && !given_("--autotune")) flags.words.emplace_back("--autotune");
      } else {
        flags.notices.push_back("--config-file " + path_ + ": '" + name +
                                "' is not a setting horovodrun reads; ignored, as horovodrun "
                                "does");
      }
    }
    return flags;
  }

 private:
  static const Setting* find_setting(const YamlEntry& entry) {
    for (const Setting& setting : kSettings) {
      if (setting.section == entry.section && setting.key == entry.key) return &setting;
    }
    return nullptr;
  }

  // Horovod applies the autotune section's values only while autotuning is on: by the command
  // line (--autotune, or in runrun any autotune value, which implies it), else by
  // autotune.enabled; --no-autotune wins over both.
  bool autotune_on(const std::map<std::string, YamlEntry>& by_name) const {
    if (given_("--no-autotune")) return false;
    bool enabled = false;
    const auto it = by_name.find("autotune.enabled");
    if (it != by_name.end() && !it->second.null && !yaml_bool(it->second, &enabled)) {
      fail(it->second, "'" + it->second.value + "' is not true or false");
    }
    for (const Setting& setting : kSettings) {
      if (setting.section == "autotune" && given_(setting.on_flag)) return true;
    }
    return given_("--autotune") || enabled;
  }

  void add_controller(const YamlEntry& entry, std::vector<std::string>& words) const {
    if (entry.null || given_("--gloo") || given_("--mpi")) return;
    std::string lower = entry.value;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower != "gloo" && lower != "mpi") fail(entry, "'" + entry.value + "' is not gloo or mpi");
    // Elastic jobs run over Gloo whatever the file says (as horovodrun's).
    const bool elastic =
        given_("--min-np") || given_("--max-np") || given_("--host-discovery-script");
    if (lower == "mpi" && elastic) return;
    words.push_back("--" + lower);
  }

  std::string path_;
  const std::function<bool(std::string_view)>& given_;
};

}  // namespace

ConfigFileFlags horovod_config_flags(const std::string& path,
                                     const std::function<bool(std::string_view)>& given) {
  return ConfigReader(path, given).read();
}

}  // namespace runrun::launcher

#pragma once
// Why: horovodrun's --config-file is YAML, and runrun links no YAML library. Horovod's config
// files are block mappings of scalars, one level of sections deep (`params:` then
// `  fusion_threshold_mb: 64`); this reads exactly that subset, as PyYAML would, and rejects
// everything else (lists, flow collections, anchors, block strings, deeper nesting) with the
// file, the line and what to write instead, rather than misreading it.
// Thread-safety: pure function.

#include <string>
#include <string_view>
#include <vector>

namespace runrun::launcher {

struct YamlEntry {
  std::string section;  // "" for a top-level `key: value`
  std::string key;
  std::string value;    // the scalar, unquoted
  bool quoted = false;  // written in quotes: a string, never a number or a boolean
  bool null = false;    // empty, `~` or `null`: YAML's "no value"
  int line = 0;
};

// The entries of `content` in file order (a later duplicate key wins, as in PyYAML, when the
// caller keeps the last). A section with no entries (`params:` alone) yields nothing. Throws
// InvalidArgumentError naming `source` and the line for anything outside the subset.
std::vector<YamlEntry> read_yaml_mapping(std::string_view content, const std::string& source);

// YAML 1.1's booleans as PyYAML reads them (true/false, yes/no, on/off; lower, Capitalized or
// UPPER case); false when `entry` is none of them, which the caller reports.
bool yaml_bool(const YamlEntry& entry, bool* value);

}  // namespace runrun::launcher

#pragma once
// Why: horovodrun --config-file FILE reads Horovod's YAML settings (controller, params,
// autotune, timeline, stall_check, library_options, logging). Each setting has a horovodrun
// flag of the same meaning, so the file becomes those flags, and the command line parses them
// like any other: one meaning, one validation. As in horovodrun (config_parser.py), a setting
// whose flag is on the command line keeps the command line's value, wherever the flag stands;
// autotune values count only when autotuning is on; keys Horovod does not read are ignored
// (with a notice here: Horovod's own config.default.yaml has some).
// Thread-safety: pure function (reads the file).

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace runrun::launcher {

struct ConfigFileFlags {
  std::vector<std::string> words;    // flags and their values, to parse before the command line's
  std::vector<std::string> notices;  // keys that mean nothing, and were ignored
};

// `given(flag)`: whether the command line has that flag (its long name, e.g. "--gloo").
// Throws InvalidArgumentError when the file cannot be read, is not the YAML subset of
// yaml_mapping.h, or has a value of the wrong kind (naming the line and the setting).
ConfigFileFlags horovod_config_flags(const std::string& path,
                                     const std::function<bool(std::string_view)>& given);

}  // namespace runrun::launcher

#include "launcher/options/option_spelling.h"

#include <array>
#include <string_view>
#include <utility>

#include "common/errors.h"

namespace runrun::launcher {
namespace {

// horovodrun's single-dash long names and the long names runrun declares for them.
constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kSingleDashNames = {{
    {"-np", "--num-proc"},
    {"-hostfile", "--hostfile"},
    {"-cb", "--check-build"},
    {"-prefix-timestamp", "--prefix-output-with-timestamp"},
}};

[[noreturn]] void invalid(const std::string& message) {
  throw InvalidArgumentError(RUNRUN_WHERE, message);
}

std::string_view long_name_of_single_dash(std::string_view name) {
  for (const auto& [single, long_name] : kSingleDashNames) {
    if (single == name) return long_name;
  }
  return {};
}

// argparse's abbreviations: `--name` that is no option but the start of exactly one option's
// long name means that option; several are an error naming them. Returns the word unchanged
// otherwise (an unknown name is reported by the parse that follows).
std::string expand_abbreviation(const std::string& word, const CLI::App& app) {
  const std::size_t equals = word.find('=');
  const std::string name = word.substr(2, equals == std::string::npos ? equals : equals - 2);
  if (name.empty() || app.get_option_no_throw("--" + name) != nullptr) return word;
  std::vector<std::string> candidates;
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& long_name : option->get_lnames()) {
      if (long_name.rfind(name, 0) == 0) candidates.push_back("--" + long_name);
    }
  }
  if (candidates.size() == 1) {
    return candidates.front() + (equals == std::string::npos ? "" : word.substr(equals));
  }
  if (candidates.size() > 1) {
    std::string listed;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      listed += (i == 0 ? "" : i + 1 == candidates.size() ? " or " : ", ") + candidates[i];
    }
    invalid("option '--" + name + "' is ambiguous: it could be " + listed + "; spell it out");
  }
  return word;
}

// A short option declared with a value (`-H`, `-p`, `-i`, `-x`): `-Hvalue` is `-H value`.
bool is_short_option_with_value(const std::string& word, const CLI::App& app) {
  const CLI::Option* option = app.get_option_no_throw(word.substr(0, 2));
  return option != nullptr && option->get_expected_min() > 0;
}

}  // namespace

std::vector<std::string> normalize_option_spellings(const std::vector<std::string>& args,
                                                    const CLI::App& app) {
  std::vector<std::string> out = args;
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::string& word = out[i];
    if (word == "--" || word.size() < 2 || word[0] != '-') break;  // the command starts here
    const std::size_t equals = word.find('=');
    if (word[1] == '-') {
      word = expand_abbreviation(word, app);
    } else if (const auto long_name = long_name_of_single_dash(word.substr(0, equals));
               !long_name.empty()) {
      word = std::string(long_name) + (equals == std::string::npos ? "" : word.substr(equals));
    } else if (word.size() > 2 && !is_short_option_with_value(word, app)) {
      invalid("unknown option '" + word +
              "' (see runrun --help); a command that starts with '-' goes after '--'");
    }
    if (word.find('=') != std::string::npos) continue;  // --name=value
    if (word[1] != '-' && word.size() > 2) continue;    // -Hvalue
    const CLI::Option* option = app.get_option_no_throw(word);
    if (option != nullptr && option->get_expected_min() > 0) {
      i += static_cast<std::size_t>(option->get_expected_min());  // skip its value(s)
    }
  }
  return out;
}

}  // namespace runrun::launcher

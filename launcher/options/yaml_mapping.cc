#include "launcher/options/yaml_mapping.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <sstream>

#include "common/errors.h"

namespace runrun::launcher {
namespace {

class LineError {
 public:
  LineError(const std::string& source, int number, const std::string& raw)
      : source_(source), number_(number), raw_(raw) {}
  [[noreturn]] void operator()(const std::string& why) const {
    throw InvalidArgumentError(
        RUNRUN_WHERE, source_ + " line " + std::to_string(number_) + " '" + raw_ + "': " + why +
                          " (runrun reads Horovod's config files: 'section:' lines, "
                          "each followed by indented 'key: value' lines)");
  }

 private:
  const std::string& source_;
  int number_;
  const std::string& raw_;
};

std::string_view trim_right(std::string_view text) {
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

bool is_key_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
}

// A quoted scalar at the start of `text`: its value, and what follows the closing quote.
std::string quoted_scalar(std::string_view text, std::string_view* rest, const LineError& fail) {
  const char quote = text.front();
  std::string value;
  for (std::size_t i = 1; i < text.size(); ++i) {
    const char c = text[i];
    if (quote == '\'' && c == '\'') {
      if (i + 1 < text.size() && text[i + 1] == '\'') {  // '' is one '
        value += '\'';
        ++i;
        continue;
      }
      *rest = text.substr(i + 1);
      return value;
    }
    if (quote == '"' && c == '"') {
      *rest = text.substr(i + 1);
      return value;
    }
    if (quote == '"' && c == '\\' && i + 1 < text.size()) {
      const char next = text[++i];
      if (next == 'n')
        value += '\n';
      else if (next == 't')
        value += '\t';
      else if (next == '\\' || next == '"' || next == '/')
        value += next;
      else
        fail(std::string("the escape '\\") + next + "' is not supported");
      continue;
    }
    value += c;
  }
  fail(std::string("the value has no closing ") + quote);
}

// Parses the value part of `key: value` into `entry`.
void parse_value(std::string_view text, YamlEntry& entry, const LineError& fail) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  if (!text.empty() && (text.front() == '\'' || text.front() == '"')) {
    std::string_view rest;
    entry.value = quoted_scalar(text, &rest, fail);
    entry.quoted = true;
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    if (!rest.empty() && rest.front() != '#') fail("text after the closing quote");
    return;
  }
  const std::size_t comment = text.find(" #");
  if (text.rfind('#', 0) == 0) text = {};
  text = trim_right(text.substr(0, comment));
  constexpr std::string_view kUnsupportedStarts = "[]{}&*!|>@`%";
  if (!text.empty() && kUnsupportedStarts.find(text.front()) != std::string_view::npos) {
    fail(std::string("a value starting with '") + text.front() +
         "' (a list, a flow mapping, an anchor, a tag or a block string) is not supported: "
         "write one plain or quoted value");
  }
  if (text.rfind("- ", 0) == 0 || text == "-") fail("lists are not supported");
  if (text.find(": ") != std::string_view::npos) fail("a value may not contain ': '");
  entry.value = std::string(text);
  entry.null = text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL";
}

}  // namespace

std::vector<YamlEntry> read_yaml_mapping(std::string_view content, const std::string& source) {
  std::vector<YamlEntry> entries;
  std::istringstream lines{std::string(content)};
  std::string raw;
  std::string section;     // the open section, "" when none
  int section_indent = 0;  // the indentation of its keys, once known
  bool any_line = false;
  for (int number = 1; std::getline(lines, raw); ++number) {
    const LineError fail(source, number, raw);
    const std::string_view line = trim_right(raw);
    const std::size_t indent = line.find_first_not_of(' ');
    if (indent == std::string_view::npos || line[indent] == '#') continue;  // blank or comment
    if (line[indent] == '\t') fail("a tab in the indentation (YAML indents with spaces)");
    const std::string_view text = line.substr(indent);
    if (indent == 0 && text == "---" && !any_line) continue;  // the document's start
    if (indent == 0 && text == "...") break;                  // the document's end
    any_line = true;
    const std::size_t key_end =
        std::find_if_not(text.begin(), text.end(), is_key_char) - text.begin();
    if (key_end == 0 || key_end == text.size() || text[key_end] != ':' ||
        (key_end + 1 < text.size() && text[key_end + 1] != ' ')) {
      fail("not a 'key: value' line with a plain key");
    }
    YamlEntry entry;
    entry.key = std::string(text.substr(0, key_end));
    entry.line = number;
    parse_value(text.substr(key_end + 1), entry, fail);
    if (indent == 0) {
      section.clear();
      if (entry.value.empty() && !entry.quoted) {
        section = entry.key;  // `params:`: a section's keys follow, indented
        section_indent = 0;
        continue;
      }
      entries.push_back(std::move(entry));
      continue;
    }
    if (section.empty()) fail("an indented line outside a section (after a 'key: value' line)");
    if (section_indent == 0) section_indent = static_cast<int>(indent);
    if (static_cast<int>(indent) > section_indent) {
      fail("nesting deeper than 'section: key: value' is not supported");
    }
    if (static_cast<int>(indent) < section_indent) {
      fail("the indentation differs from the lines above");
    }
    entry.section = section;
    entries.push_back(std::move(entry));
  }
  return entries;
}

bool yaml_bool(const YamlEntry& entry, bool* value) {
  if (entry.quoted || entry.null) return false;
  static constexpr std::array<std::string_view, 9> kTrue = {"true", "True", "TRUE", "yes", "Yes",
                                                            "YES",  "on",   "On",   "ON"};
  static constexpr std::array<std::string_view, 9> kFalse = {"false", "False", "FALSE", "no", "No",
                                                             "NO",    "off",   "Off",   "OFF"};
  if (std::find(kTrue.begin(), kTrue.end(), entry.value) != kTrue.end()) {
    *value = true;
    return true;
  }
  if (std::find(kFalse.begin(), kFalse.end(), entry.value) != kFalse.end()) {
    *value = false;
    return true;
  }
  return false;
}

}  // namespace runrun::launcher

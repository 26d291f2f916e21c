#include "launcher/remote/shell_words.h"

#include "common/errors.h"

namespace runrun::launcher {

std::string shell_quote(std::string_view word) {
  if (word.empty()) return "''";
  bool plain = true;
  for (char c : word) {
    const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_' || c == '.' || c == '/' || c == ':' || c == ',' ||
                      c == '=' || c == '+' || c == '@' || c == '%';
    if (!safe) {
      plain = false;
      break;
    }
  }
  if (plain) return std::string(word);
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string shell_join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& word : words) {
    if (!out.empty()) out += ' ';
    out += shell_quote(word);
  }
  return out;
}

std::vector<std::string> split_shell_words(std::string_view line, std::string_view what) {
  std::vector<std::string> words;
  std::string current;
  bool in_word = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(current));
      current.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\'' || c == '"') {
      std::size_t j = i + 1;
      for (; j < line.size() && line[j] != c; ++j) {
        if (c == '"' && line[j] == '\\' && j + 1 < line.size()) ++j;
        current += line[j];
      }
      if (j >= line.size()) {
        throw InvalidArgumentError(RUNRUN_WHERE, std::string(what) + " '" + std::string(line) +
                                                     "' has an unterminated " + c + " quote");
      }
      i = j;
    } else if (c == '\\' && i + 1 < line.size()) {
      current += line[++i];
    } else {
      current += c;
    }
  }
  if (in_word) words.push_back(std::move(current));
  return words;
}

}  // namespace runrun::launcher

#pragma once
// Why: --dry-run and --verbose print commands a user can paste into a shell, and --mpi-args is a
// single string the user writes like a shell line; both need shell quoting rules.
// Thread-safety: pure functions.

#include <string>
#include <string_view>
#include <vector>

namespace runrun::launcher {

// `word` quoted for a POSIX shell; unchanged when it needs no quoting.
std::string shell_quote(std::string_view word);

// The words quoted and joined by spaces.
std::string shell_join(const std::vector<std::string>& words);

// Splits `line` into words like a POSIX shell without expansions: blanks separate words;
// '...' is literal; "..." and backslash escape. Throws InvalidArgumentError (naming `what`) for
// an unterminated quote.
std::vector<std::string> split_shell_words(std::string_view line, std::string_view what);

}  // namespace runrun::launcher

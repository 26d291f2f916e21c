#pragma once
// Why: ranks the launcher starts itself (runrun --gloo) get their environment through their
// stdin, not through a command line: a remote shell's command line is visible to every user of
// that host (ps) and may be logged, and the block carries the job's rendezvous secret. The same
// path serves local ranks, so the remote path is the one every local test exercises. After the
// block, the rank shim keeps its stdin open as a lifeline: end of file means the launcher (or
// the remote shell connecting it) is gone, and the rank is stopped.
// Format: entries "NAME=value" each followed by a NUL byte, then one more NUL byte (values may
// hold any byte but NUL, as in an environment).
// Thread-safety: pure functions, and one reader function over a file descriptor.

#include <string>
#include <utility>
#include <vector>

namespace runrun::launcher {

using EnvEntries = std::vector<std::pair<std::string, std::string>>;

// The block for `entries`. Throws InvalidArgumentError for a name that is empty, holds '=' or
// NUL, or a value that holds NUL.
std::string encode_environment_block(const EnvEntries& entries);

// Parses a whole block (as encode makes it); throws InvalidArgumentError when it is malformed
// or unterminated.
EnvEntries decode_environment_block(const std::string& block);

// Reads one block from `fd`, byte-exactly (nothing after the terminator is consumed), waiting
// at most `timeout_ms` in all. Throws InvalidArgumentError on end of file, timeout, a read
// error or more than `max_bytes`.
EnvEntries read_environment_block(int fd, int timeout_ms, std::size_t max_bytes = 1 << 20);

}  // namespace runrun::launcher

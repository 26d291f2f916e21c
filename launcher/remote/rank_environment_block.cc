#include "launcher/remote/rank_environment_block.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "common/errors.h"

namespace runrun::launcher {
namespace {

[[noreturn]] void malformed(const std::string& why) {
  throw InvalidArgumentError(RUNRUN_WHERE, "the environment block from the launcher " + why +
                                               " (runrun --rank-shim is started by runrun, with "
                                               "the block on its stdin)");
}

// The length of the complete block at the start of `bytes`, or 0 when it is not complete yet.
std::size_t complete_length(const std::string& bytes) {
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    if (bytes[pos] == '\0') return pos + 1;  // an empty entry: the terminator
    const std::size_t end = bytes.find('\0', pos);
    if (end == std::string::npos) return 0;
    pos = end + 1;
  }
  return 0;
}

}  // namespace

std::string encode_environment_block(const EnvEntries& entries) {
  std::string block;
  for (const auto& [name, value] : entries) {
    if (name.empty() || name.find_first_of(std::string("=\0", 2)) != std::string::npos ||
        value.find('\0') != std::string::npos) {
      throw InvalidArgumentError(RUNRUN_WHERE, "cannot pass the variable '" + name +
                                                   "' to the ranks: a name must be non-empty "
                                                   "without '=' or NUL, a value without NUL");
    }
    block += name + "=" + value;
    block += '\0';
  }
  block += '\0';
  return block;
}

EnvEntries decode_environment_block(const std::string& block) {
  const std::size_t length = complete_length(block);
  if (length == 0) malformed("ends before its terminator");
  if (length != block.size()) malformed("has bytes after its terminator");
  EnvEntries entries;
  std::size_t pos = 0;
  while (block[pos] != '\0') {
    const std::size_t end = block.find('\0', pos);
    const std::string entry = block.substr(pos, end - pos);
    const std::size_t equals = entry.find('=');
    if (equals == std::string::npos || equals == 0) malformed("holds an entry without NAME=");
    entries.emplace_back(entry.substr(0, equals), entry.substr(equals + 1));
    pos = end + 1;
  }
  return entries;
}

EnvEntries read_environment_block(int fd, int timeout_ms, std::size_t max_bytes) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string bytes;
  for (;;) {
    const std::size_t length = complete_length(bytes);
    if (length != 0) return decode_environment_block(bytes.substr(0, length));
    if (bytes.size() > max_bytes) {
      malformed("is larger than " + std::to_string(max_bytes) + " bytes");
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      malformed("did not arrive within " + std::to_string(timeout_ms) + " ms");
    }
    pollfd waiting{fd, POLLIN, 0};
    const int ready = poll(&waiting, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR) {
      malformed(std::string("cannot be read: ") + std::strerror(errno));
    }
    if (ready <= 0) continue;
    // One byte at a time: nothing after the terminator may be consumed (the rest of stdin is
    // the lifeline). The block is a few kilobytes.
    char byte = 0;
    const ssize_t n = read(fd, &byte, 1);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) malformed(std::string("cannot be read: ") + std::strerror(errno));
    if (n == 0) malformed("ended (end of file) before its terminator");
    bytes.push_back(byte);
  }
}

}  // namespace runrun::launcher

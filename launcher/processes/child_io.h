#pragma once
// Why: the supervisor, the elastic driver's workers and the discovery script's runs each read
// their children's output pipes as it comes, write an environment block to a child's stdin
// lifeline, and reap children with or without waiting. These are the one implementation of
// each (they were written three times), so that end of file, EINTR/EAGAIN and a child that
// died early are handled the same everywhere.
// Thread-safety: reentrant; each call acts on the descriptors and children it is given, which
// the caller owns.

#include <sys/types.h>

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "launcher/processes/unique_fd.h"

namespace runrun::launcher {

// Reads once what the pipe `fd` holds now, into `buffer`, without blocking (a pipe with nothing
// to read returns at once). Returns the bytes read; none when there was nothing (or EINTR), or
// at end of file or on an error, where it also closes `fd` (then !fd.valid()). Does nothing on
// a closed `fd`.
std::string_view read_available(UniqueFd& fd, std::span<char> buffer);

// Writes `block` to `fd` (a child's stdin pipe, left open afterwards: its lifeline). The pipe is
// made large enough first, so that the write never waits for the child; a child gone already
// stops the write (its exit is reported like any other; SIGPIPE must be ignored).
void write_block(int fd, const std::string& block);

// The wait status of child `pid` if it has exited (it is reaped now); nullopt while it runs or
// when it cannot be waited for. Never waits.
std::optional<int> reap_if_exited(pid_t pid);

// Waits for child `pid` to exit (through EINTR) and returns its wait status; nullopt when it
// cannot be waited for (not a child of this process, or reaped already).
std::optional<int> wait_for_exit(pid_t pid);

}  // namespace runrun::launcher

#pragma once
// Why: the launcher holds many file descriptors at once (each child's stdin lifeline and output
// pipes, a signalfd) and closes them on several paths (end of file, a child's exit, a stop
// request, an exception); one owner per descriptor, closed exactly once by its destructor,
// leaves none open and closes none twice.
// Thread-safety: a value type like std::unique_ptr: one owner; not synchronized.

#include <utility>

namespace runrun::launcher {

// An owning file descriptor: move-only, closes what it holds when destroyed or reset. -1 (the
// default) holds nothing.
class UniqueFd {
 public:
  UniqueFd() noexcept = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const noexcept { return fd_; }
  bool valid() const noexcept { return fd_ >= 0; }
  // Gives the descriptor up without closing it; holds nothing afterwards.
  int release() noexcept { return std::exchange(fd_, -1); }
  // Closes what it holds (if anything) and takes `fd`.
  void reset(int fd = -1) noexcept;

 private:
  int fd_ = -1;
};

}  // namespace runrun::launcher

#pragma once
// Why: the memory ranks of one host share: a POSIX shared-memory object (shm_open) mapped by
// every member. The creator makes it under a fresh unique name; the others open it by that
// name; the creator unlinks the name as soon as every member has mapped it, so a job that is
// killed later leaves nothing in /dev/shm (the memory lives until the last mapping goes).
// Thread-safety: a Segment is owned by one object; unlink() and the accessors are const-safe
// from any thread once constructed.

#include <cstddef>
#include <string>

namespace runrun::shm {

class Segment {
 public:
  // A new object of `bytes` (reserved with posix_fallocate, so a full /dev/shm fails here
  // instead of with SIGBUS on first touch), mapped, under a unique name "/runrun-shm-...".
  // Throws InternalError naming the call, the object and the reason.
  static Segment create(size_t bytes);
  // Maps the existing object `name` of `bytes`.
  static Segment open(const std::string& name, size_t bytes);

  Segment() = default;
  Segment(Segment&& other) noexcept;
  Segment& operator=(Segment&& other) noexcept;
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;
  ~Segment();  // unmaps (and unlinks when this process created it and has not yet)

  // Removes the name (mapped memory stays valid). Idempotent; only the creator unlinks.
  void unlink();

  char* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& name() const { return name_; }
  bool linked() const { return linked_; }

 private:
  Segment(std::string name, char* data, size_t size, bool created);
  void release();  // unlink (creator) and unmap

  std::string name_;
  char* data_ = nullptr;
  size_t size_ = 0;
  bool linked_ = false;  // created here and not yet unlinked
};

// Whether /dev/shm holds an object whose name starts with `prefix` (tests, diagnostics).
bool segment_exists_with_prefix(const std::string& prefix);

// The prefix of every segment name runrun creates ("runrun-shm-").
inline constexpr const char* kSegmentPrefix = "runrun-shm-";

}  // namespace runrun::shm

#include "ops/shm/shm_segment.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <utility>

#include "common/errors.h"

namespace runrun::shm {
namespace {

std::string unique_name() {
  static std::atomic<uint64_t> counter{0};
  std::random_device device;
  const uint64_t salt = (static_cast<uint64_t>(device()) << 32) ^ device();
  char text[96];
  std::snprintf(text, sizeof(text), "/%s%d-%llu-%016llx", kSegmentPrefix,
                static_cast<int>(getpid()), static_cast<unsigned long long>(counter++),
                static_cast<unsigned long long>(salt));
  return text;
}

[[noreturn]] void fail(const std::string& what, const std::string& name, int error) {
  throw InternalError(RUNRUN_WHERE, "shared memory: " + what + " of '" + name +
                                        "' failed: " + std::strerror(error) +
                                        " (is /dev/shm mounted and large enough? "
                                        "RUNRUN_GLOO_SHM=0 turns the shared-memory path off)");
}

char* map(int fd, const std::string& name, size_t bytes) {
  void* data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (data == MAP_FAILED) {
    const int error = errno;
    close(fd);
    fail("mmap", name, error);
  }
  close(fd);
  return static_cast<char*>(data);
}

}  // namespace

Segment::Segment(std::string name, char* data, size_t size, bool created)
    : name_(std::move(name)), data_(data), size_(size), linked_(created) {}

Segment::Segment(Segment&& other) noexcept { *this = std::move(other); }

Segment& Segment::operator=(Segment&& other) noexcept {
  if (this == &other) return *this;
  release();
  name_ = std::move(other.name_);
  data_ = std::exchange(other.data_, nullptr);
  size_ = std::exchange(other.size_, 0);
  linked_ = std::exchange(other.linked_, false);
  return *this;
}

Segment::~Segment() { release(); }

void Segment::release() {
  unlink();
  if (data_ != nullptr) munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
}

void Segment::unlink() {
  if (!linked_) return;
  linked_ = false;
  shm_unlink(name_.c_str());
}

Segment Segment::create(size_t bytes) {
  const std::string name = unique_name();
  const int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0) fail("shm_open (create)", name, errno);
  const int error = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  if (error != 0) {
    close(fd);
    shm_unlink(name.c_str());
    fail("reserving " + std::to_string(bytes) + " bytes", name, error);
  }
  char* data = nullptr;
  try {
    data = map(fd, name, bytes);
  } catch (...) {
    shm_unlink(name.c_str());
    throw;
  }
  return Segment(name, data, bytes, /*created=*/true);
}

Segment Segment::open(const std::string& name, size_t bytes) {
  const int fd = shm_open(name.c_str(), O_RDWR, 0600);
  if (fd < 0) fail("shm_open", name, errno);
  struct stat info{};
  if (fstat(fd, &info) != 0 || static_cast<size_t>(info.st_size) < bytes) {
    close(fd);
    throw InternalError(RUNRUN_WHERE, "shared memory: '" + name + "' is smaller than the " +
                                          std::to_string(bytes) + " bytes its creator announced");
  }
  return Segment(name, map(fd, name, bytes), bytes, /*created=*/false);
}

bool segment_exists_with_prefix(const std::string& prefix) {
  DIR* directory = opendir("/dev/shm");
  if (directory == nullptr) return false;
  bool found = false;
  while (const dirent* entry = readdir(directory)) {
    if (std::strncmp(entry->d_name, prefix.c_str(), prefix.size()) == 0) found = true;
  }
  closedir(directory);
  return found;
}

}  // namespace runrun::shm

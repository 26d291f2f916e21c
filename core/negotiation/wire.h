#pragma once
// Why: negotiation messages (requests, responses) cross the control channel as bytes. This is
// the tiny, explicit little-endian encoding they use: no schema compiler, no reflection, and a
// reader that throws (never reads past the end) when a peer sent something malformed.
// Thread-safety: a WireWriter/WireReader is used by one thread.

#include <dlpack/dlpack.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace runrun {

class WireWriter {
 public:
  WireWriter() = default;
  // Reserves `capacity` bytes up front: a caller that knows the message size avoids regrowth.
  explicit WireWriter(size_t capacity) { bytes_.reserve(capacity); }
  void u8(uint8_t v) { bytes_.push_back(static_cast<char>(v)); }
  void i32(int32_t v) { raw(&v, sizeof(v)); }
  void i64(int64_t v) { raw(&v, sizeof(v)); }
  void f64(double v) { raw(&v, sizeof(v)); }
  void str(std::string_view s);
  void i64s(const std::vector<int64_t>& values);
  // A tensor's device (DLPack type and id), so ranks can compare where their tensors live.
  void device(DLDevice d) {
    i32(static_cast<int32_t>(d.device_type));
    i32(d.device_id);
  }
  std::string take() { return std::move(bytes_); }

 private:
  void raw(const void* p, size_t n) { bytes_.append(static_cast<const char*>(p), n); }
  std::string bytes_;
};

class WireReader {
 public:
  explicit WireReader(std::string_view bytes) : bytes_(bytes) {}
  uint8_t u8();
  int32_t i32();
  int64_t i64();
  double f64();
  std::string str();
  std::vector<int64_t> i64s();
  DLDevice device() {
    DLDevice d{};
    d.device_type = static_cast<DLDeviceType>(i32());
    d.device_id = i32();
    return d;
  }
  bool done() const { return pos_ == bytes_.size(); }

 private:
  void raw(void* p, size_t n);
  std::string_view bytes_;
  size_t pos_ = 0;
};

}  // namespace runrun

#pragma once
// Why: the rendezvous protocol's payloads are built and parsed field by field (integers in
// network byte order, strings with a u32 length). One encoder and one bounds-checked decoder keep
// every message the same shape on both sides and make a truncated or malformed payload an error,
// never an out-of-bounds read.
// Thread-safety: values; one thread per object.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace runrun::rendezvous {

class PayloadWriter {
 public:
  void u8(uint8_t value) { bytes_.push_back(static_cast<char>(value)); }
  void u32(uint32_t value);
  void u64(uint64_t value);
  void i64(int64_t value) { u64(static_cast<uint64_t>(value)); }
  void string(std::string_view value);  // u32 length, then the bytes
  void raw(std::string_view value) { bytes_.append(value); }
  std::string& bytes() { return bytes_; }

 private:
  std::string bytes_;
};

// Throws MalformedPayload (caught by the server, which answers with a protocol error) when a
// field runs past the end of the payload.
struct MalformedPayload {
  std::string what;
};

// Reads a payload it does not own: the string must outlive the reader.
class PayloadReader {
 public:
  explicit PayloadReader(std::string_view payload) : rest_(payload) {}
  uint8_t u8();
  uint32_t u32();
  uint64_t u64();
  int64_t i64() { return static_cast<int64_t>(u64()); }
  std::string string();
  std::string raw(size_t size);
  std::vector<std::string> strings();  // u32 count, then strings
  bool at_end() const { return rest_.empty(); }
  void expect_end() const;

 private:
  std::string_view take(size_t size, const char* field);
  std::string_view rest_;
};

// A frame on the wire: a u32 (network order) payload length, then the payload.
inline constexpr size_t kFrameHeaderBytes = 4;
std::string frame(std::string_view payload);
uint32_t decode_frame_length(const char* header);

}  // namespace runrun::rendezvous

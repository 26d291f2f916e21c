#include "rendezvous/wire_codec.h"

#include <arpa/inet.h>

#include <cstring>

namespace runrun::rendezvous {

void PayloadWriter::u32(uint32_t value) {
  const uint32_t net = htonl(value);
  bytes_.append(reinterpret_cast<const char*>(&net), sizeof(net));
}

void PayloadWriter::u64(uint64_t value) {
  u32(static_cast<uint32_t>(value >> 32));
  u32(static_cast<uint32_t>(value & 0xffffffffu));
}

void PayloadWriter::string(std::string_view value) {
  u32(static_cast<uint32_t>(value.size()));
  bytes_.append(value);
}

std::string_view PayloadReader::take(size_t size, const char* field) {
  if (size > rest_.size()) {
    throw MalformedPayload{std::string("truncated ") + field + ": " + std::to_string(size) +
                           " bytes needed, " + std::to_string(rest_.size()) + " left"};
  }
  std::string_view out = rest_.substr(0, size);
  rest_.remove_prefix(size);
  return out;
}

uint8_t PayloadReader::u8() { return static_cast<uint8_t>(take(1, "u8")[0]); }

uint32_t PayloadReader::u32() {
  uint32_t net = 0;
  std::memcpy(&net, take(sizeof(net), "u32").data(), sizeof(net));
  return ntohl(net);
}

uint64_t PayloadReader::u64() {
  const uint64_t high = u32();
  return (high << 32) | u32();
}

std::string PayloadReader::string() {
  const uint32_t size = u32();
  return std::string(take(size, "string"));
}

std::string PayloadReader::raw(size_t size) { return std::string(take(size, "bytes")); }

std::vector<std::string> PayloadReader::strings() {
  const uint32_t count = u32();
  // Each string needs at least its 4-byte length: a count beyond that is malformed, and checking
  // it first keeps a hostile count from reserving memory.
  if (count > rest_.size() / 4) throw MalformedPayload{"string count larger than the payload"};
  std::vector<std::string> out;
  out.reserve(count);
  for (uint32_t i = 0; i < count; ++i) out.push_back(string());
  return out;
}

void PayloadReader::expect_end() const {
  if (!rest_.empty()) {
    throw MalformedPayload{std::to_string(rest_.size()) + " unexpected trailing bytes"};
  }
}

std::string frame(std::string_view payload) {
  PayloadWriter writer;
  writer.u32(static_cast<uint32_t>(payload.size()));
  writer.raw(payload);
  return std::move(writer.bytes());
}

uint32_t decode_frame_length(const char* header) {
  uint32_t net = 0;
  std::memcpy(&net, header, sizeof(net));
  return ntohl(net);
}

}  // namespace runrun::rendezvous

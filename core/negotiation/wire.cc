#include "core/negotiation/wire.h"

#include "common/errors.h"

namespace runrun {

void WireWriter::str(std::string_view s) {
  i64(static_cast<int64_t>(s.size()));
  raw(s.data(), s.size());
}

void WireWriter::i64s(const std::vector<int64_t>& values) {
  i64(static_cast<int64_t>(values.size()));
  raw(values.data(), values.size() * sizeof(int64_t));
}

void WireReader::raw(void* p, size_t n) {
  if (n > bytes_.size() - pos_) {
    throw InternalError(RUNRUN_WHERE, "malformed negotiation message: wanted " + std::to_string(n) +
                                          " bytes at offset " + std::to_string(pos_) + " of " +
                                          std::to_string(bytes_.size()) +
                                          " (are all ranks running the same runrun version?)");
  }
  if (n) std::memcpy(p, bytes_.data() + pos_, n);
  pos_ += n;
}

uint8_t WireReader::u8() {
  uint8_t v;
  raw(&v, 1);
  return v;
}
int32_t WireReader::i32() {
  int32_t v;
  raw(&v, sizeof(v));
  return v;
}
int64_t WireReader::i64() {
  int64_t v;
  raw(&v, sizeof(v));
  return v;
}
double WireReader::f64() {
  double v;
  raw(&v, sizeof(v));
  return v;
}

std::string WireReader::str() {
  int64_t n = i64();
  if (n < 0) throw InternalError(RUNRUN_WHERE, "malformed negotiation message: negative length");
  std::string s(static_cast<size_t>(n), '\0');
  raw(s.data(), s.size());
  return s;
}

std::vector<int64_t> WireReader::i64s() {
  int64_t n = i64();
  if (n < 0) throw InternalError(RUNRUN_WHERE, "malformed negotiation message: negative count");
  std::vector<int64_t> v(static_cast<size_t>(n));
  raw(v.data(), v.size() * sizeof(int64_t));
  return v;
}

}  // namespace runrun

#pragma once
// Why: the timeline tests must check that a trace file is strict JSON (what Python's json and
// Perfetto accept) and look inside its events. A small strict reader, test-only.
// Thread-safety: plain values and a pure function.

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace runrun::test {

struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  std::string text;                         // kString
  std::vector<JsonValue> items;             // kArray
  std::map<std::string, JsonValue> fields;  // kObject (duplicate keys are an error)

  bool has(const std::string& key) const { return fields.count(key) != 0; }
  const JsonValue& at(const std::string& key) const;  // throws std::runtime_error when absent
};

// Parses one JSON document (RFC 8259, strict: no trailing commas, no control characters in
// strings, UTF-8 checked by \u decoding only). Throws std::runtime_error naming the offset.
JsonValue parse_json(std::string_view document);

}  // namespace runrun::test

#include "rendezvous/request_handler.h"

#include <cstdlib>

#include "rendezvous/elastic_keys.h"
#include "rendezvous/protocol.h"
#include "rendezvous/wire_codec.h"

namespace runrun::rendezvous {
namespace {

std::string simple_answer(MessageType type) { return std::string(1, static_cast<char>(type)); }

std::string bool_answer(bool value) {
  PayloadWriter writer;
  writer.u8(static_cast<uint8_t>(MessageType::kBool));
  writer.u8(value ? 1 : 0);
  return std::move(writer.bytes());
}

std::string join(const std::vector<std::string>& keys) {
  std::string out;
  for (const std::string& key : keys) out += (out.empty() ? "'" : ", '") + key + "'";
  return out;
}

HandledRequest handle_wait(uint64_t generation, PayloadReader& reader, const KeyValueStore& store,
                           Clock::time_point now) {
  const uint64_t timeout_ms = reader.u64();
  ParkedWait wait{generation, reader.strings(), now};
  reader.expect_end();
  // Saturate: a huge timeout means "very long", not an overflowed deadline in the past.
  const auto max_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
      Clock::time_point::max() - now - std::chrono::hours(1));
  wait.deadline = now + std::chrono::milliseconds(
                            std::min<uint64_t>(timeout_ms, static_cast<uint64_t>(max_ms.count())));
  if (auto answer = answer_parked_wait(wait, store, now)) return {*answer, std::nullopt, false};
  return {{}, std::move(wait), false};
}

HandledRequest dispatch(MessageType type, uint64_t generation, PayloadReader& reader,
                        KeyValueStore& store, Clock::time_point now) {
  switch (type) {
    case MessageType::kSet: {
      const std::string key = reader.string();
      const std::string value = reader.string();
      reader.expect_end();
      if (!store.set(generation, key, value)) {
        return {error_answer(static_cast<uint8_t>(ErrorKind::kFull),
                             "the rendezvous store is full (" + std::to_string(store.bytes()) +
                                 " bytes held); key '" + key + "' was not set"),
                std::nullopt, false};
      }
      return {simple_answer(MessageType::kOk), std::nullopt, true};
    }
    case MessageType::kGet: {
      const std::string key = reader.string();
      reader.expect_end();
      auto value = store.get(generation, key);
      if (!value) return {simple_answer(MessageType::kNotFound), std::nullopt, false};
      PayloadWriter writer;
      writer.u8(static_cast<uint8_t>(MessageType::kValue));
      writer.string(*value);
      return {std::move(writer.bytes()), std::nullopt, false};
    }
    case MessageType::kWait:
      return handle_wait(generation, reader, store, now);
    case MessageType::kAdd: {
      const std::string key = reader.string();
      const int64_t delta = reader.i64();
      reader.expect_end();
      auto result = store.add(generation, key, delta);
      if (!result.value) {
        const auto kind = result.full ? ErrorKind::kFull : ErrorKind::kBadRequest;
        return {error_answer(static_cast<uint8_t>(kind), result.error), std::nullopt, false};
      }
      PayloadWriter writer;
      writer.u8(static_cast<uint8_t>(MessageType::kCounter));
      writer.i64(*result.value);
      return {std::move(writer.bytes()), std::nullopt, true};
    }
    case MessageType::kCheck: {
      const auto keys = reader.strings();
      reader.expect_end();
      return {bool_answer(store.missing(generation, keys).empty()), std::nullopt, false};
    }
    case MessageType::kDelete: {
      const std::string key = reader.string();
      reader.expect_end();
      return {bool_answer(store.remove(generation, key)), std::nullopt, false};
    }
    case MessageType::kDropBefore:
      reader.expect_end();
      store.drop_before(generation);
      return {simple_answer(MessageType::kOk), std::nullopt, false};
    default:
      return {error_answer(static_cast<uint8_t>(ErrorKind::kBadRequest),
                           "unknown request type " + std::to_string(static_cast<int>(type))),
              std::nullopt, false};
  }
}

}  // namespace

std::string error_answer(uint8_t kind, const std::string& text) {
  PayloadWriter writer;
  writer.u8(static_cast<uint8_t>(MessageType::kError));
  writer.u8(kind);
  writer.string(text);
  return std::move(writer.bytes());
}

HandledRequest handle_request(std::string_view payload, KeyValueStore& store,
                              Clock::time_point now) {
  PayloadReader reader(payload);
  try {
    const auto type = static_cast<MessageType>(reader.u8());
    const uint64_t generation = reader.u64();
    return dispatch(type, generation, reader, store, now);
  } catch (const MalformedPayload& error) {
    return {error_answer(static_cast<uint8_t>(ErrorKind::kBadRequest),
                         "malformed request: " + error.what),
            std::nullopt, false};
  }
}

std::optional<std::string> answer_parked_wait(const ParkedWait& wait, const KeyValueStore& store,
                                              Clock::time_point now) {
  const auto missing = store.missing(wait.generation, wait.keys);
  if (missing.empty()) return simple_answer(MessageType::kOk);
  // An elastic generation the driver replaced (a member left before joining it) will never be
  // complete: its waiters go on to the newer one now, not when their wait times out.
  if (wait.generation != kElasticControlGeneration) {
    const auto current = store.get(kElasticControlGeneration, kElasticGenerationKey);
    const uint64_t newest = current ? std::strtoull(current->c_str(), nullptr, 10) : 0;
    if (newest > wait.generation) {
      return error_answer(
          static_cast<uint8_t>(ErrorKind::kSuperseded),
          "elastic generation " + std::to_string(wait.generation) + " was replaced by generation " +
              std::to_string(newest) +
              " (the membership changed) before these keys were set: " + join(missing));
    }
  }
  if (now < wait.deadline) return std::nullopt;
  return error_answer(
      static_cast<uint8_t>(ErrorKind::kTimeout),
      "keys not set in generation " + std::to_string(wait.generation) + ": " + join(missing));
}

}  // namespace runrun::rendezvous

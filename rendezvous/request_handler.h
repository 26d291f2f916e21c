#pragma once
// Why: what the server does with one authenticated request, apart from sockets: decode it,
// apply it to the store, encode the answer. A wait whose keys are not all there yet is parked
// and answered later by the server loop (after a change to the store, or at its deadline).
// Thread-safety: none; called on the server thread only.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rendezvous/key_value_store.h"

namespace runrun::rendezvous {

using Clock = std::chrono::steady_clock;

struct ParkedWait {
  uint64_t generation = 0;
  std::vector<std::string> keys;
  Clock::time_point deadline;
};

struct HandledRequest {
  std::string answer;              // a payload to send; empty when the request was parked
  std::optional<ParkedWait> wait;  // set when the request is a wait still pending
  bool store_changed = false;      // parked waits should be re-checked
};

// Handles one request payload (type byte first). A malformed request gets an error answer; the
// connection stays usable since the frame boundary is intact.
HandledRequest handle_request(std::string_view payload, KeyValueStore& store,
                              Clock::time_point now);

// The answer to a parked wait once its keys all exist or its deadline has passed; nullopt while
// it must keep waiting.
std::optional<std::string> answer_parked_wait(const ParkedWait& wait, const KeyValueStore& store,
                                              Clock::time_point now);

// Encodes an error answer.
std::string error_answer(uint8_t kind, const std::string& text);

}  // namespace runrun::rendezvous

#pragma once
// Why: the rendezvous wire protocol, named once for the server and the client.
//
// Every message is a frame (wire_codec.h): u32 length, then a payload whose first byte is a
// MessageType. A connection starts with the authentication handshake:
//   server -> Hello   {magic, version, server nonce (32 random bytes)}
//   client -> Auth    {client nonce (32 bytes), proof length u8, proof}
//                      proof = HMAC-SHA256(secret, "client" | server nonce | client nonce)
//   server -> Welcome {HMAC-SHA256(secret, "server" | server nonce | client nonce)}
//          or Refused {RefusalReason, text}, and the server closes the connection.
// The secret itself never crosses the wire; fresh nonces on both sides make a recorded
// handshake useless on another connection, and the Welcome proof tells the client it reached
// the job's own server. After Welcome the client sends requests, one answer per request, in
// order. Every request names a generation: keys live per generation (elastic training starts a
// new generation on every membership change and drops the old ones).
// Thread-safety: constants.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace runrun::rendezvous {

inline constexpr std::string_view kMagic = "runrun-rendezvous";
inline constexpr uint32_t kProtocolVersion = 1;
inline constexpr size_t kNonceBytes = 32;
inline constexpr size_t kProofBytes = 32;  // SHA-256

enum class MessageType : uint8_t {
  // handshake
  kHello = 1,
  kAuth = 2,
  kWelcome = 3,
  kRefused = 4,
  // requests {u64 generation, ...}
  kSet = 10,         // key, value                 -> kOk
  kGet = 11,         // key                        -> kValue | kNotFound
  kWait = 12,        // u64 timeout ms, keys       -> kOk | kError(kTimeout) once all keys exist
  kAdd = 13,         // key, i64 delta             -> kCounter (the new value)
  kCheck = 14,       // keys                       -> kBool (all exist)
  kDelete = 15,      // key                        -> kBool (it existed)
  kDropBefore = 16,  // (no fields)              -> kOk; drops every generation below this one
  // answers
  kOk = 30,
  kValue = 31,  // value
  kNotFound = 32,
  kCounter = 33,  // i64
  kBool = 34,     // u8
  kError = 35,    // u8 ErrorKind, text
};

enum class RefusalReason : uint8_t {
  kWrongSecret = 1,
  kNoSecret = 2,
  kProtocol = 3,  // not a runrun rendezvous client, wrong version, oversized or garbage frame
  kTimeout = 4,   // did not authenticate in time
};

enum class ErrorKind : uint8_t {
  kBadRequest = 1,  // malformed request or wrong types (a counter that is not a counter)
  kTimeout = 2,     // a wait whose keys did not all appear in time
  kFull = 3,        // the store's memory bound would be exceeded
  kSuperseded = 4,  // a wait in an elastic generation the driver has replaced by a newer one
};

// Server-side bounds, so one client cannot make the launcher use unbounded memory.
inline constexpr size_t kDefaultMaxFrameBytes = 16u << 20;   // one request or answer
inline constexpr size_t kDefaultMaxStoreBytes = 512u << 20;  // all keys and values together
inline constexpr std::chrono::seconds kDefaultAuthTimeout{10};

}  // namespace runrun::rendezvous

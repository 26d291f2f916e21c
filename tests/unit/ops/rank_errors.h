#pragma once
// Why: backend tests run ranks as threads and collect one error per rank, then inspect them.
// When one rank fails, its peers usually fail too with a PeerFailureError that is only a
// consequence; reporting the root cause first, and reading collected errors, is shared by every
// backend's harness and failure tests (local_ranks.h, gloo_ranks.h).
// Thread-safety: call from the test's main thread after the rank threads joined. RANK_CHECK and
// its siblings are for rank threads: Catch2 v2 assertions are not thread-safe, so a rank thread
// throws the failure (file, line, condition) for the main thread to report.

#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/errors.h"

namespace runrun::testing {

// Rethrows the first failure that is not a peer's consequential PeerFailureError (else the
// first PeerFailureError); returns when no rank failed.
inline void rethrow_root_cause(const std::vector<std::exception_ptr>& errors) {
  std::exception_ptr first_peer_failure;
  for (const auto& error : errors) {
    if (!error) continue;
    try {
      std::rethrow_exception(error);
    } catch (const PeerFailureError&) {
      if (!first_peer_failure) first_peer_failure = error;
    } catch (...) {
      throw;
    }
  }
  if (first_peer_failure) std::rethrow_exception(first_peer_failure);
}

// The message of a collected error (it must be a std::exception).
inline std::string message_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  }
}

// Whether a collected error is of type ErrorType (or derives from it).
template <typename ErrorType>
bool is(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const ErrorType&) {
    return true;
  } catch (...) {
    return false;
  }
}

}  // namespace runrun::testing

#define RANK_CHECK(condition)                                                           \
  do {                                                                                  \
    if (!(condition)) {                                                                 \
      throw std::runtime_error(std::string(__FILE__) + ":" + std::to_string(__LINE__) + \
                               ": check failed: " #condition);                          \
    }                                                                                   \
  } while (0)
#define RANK_CHECK_EQ(a, b) RANK_CHECK((a) == (b))
#define RANK_CHECK_THROWS(ErrorType, expression) \
  do {                                           \
    bool threw = false;                          \
    try {                                        \
      (void)(expression);                        \
    } catch (const ErrorType&) {                 \
      threw = true;                              \
    }                                            \
    RANK_CHECK(threw);                           \
  } while (0)

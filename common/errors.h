#pragma once
// Why: the runtime's error model. Inside C++ every failure is an exception of this small
// hierarchy; the code says which kind (and maps 1:1 onto the C API status codes), the message
// says what, where (rank, op, tensor) and what to do, and `where` carries file:line.
// Thread-safety: immutable values; safe to copy between threads (handles carry them).

#include <stdexcept>
#include <string>

namespace runrun {

enum class ErrorCode : int {
  kOk = 0,
  kInvalidArgument = 1,  // the caller passed something wrong; nothing was enqueued
  kMismatch = 2,         // ranks disagreed about an op (dtype, shape, op, root, ...)
  kPeerFailure = 3,      // a peer or the transport failed
  kTimeout = 4,          // something did not finish in its configured time
  kShutDown = 5,         // the runtime is (being) shut down
  kInternal = 6,         // a bug in runrun: please report it
  kUnsupported = 7,      // the backend or build does not offer this
};

std::string_view error_code_name(ErrorCode code);

struct SourceLocation {
  const char* file;
  int line;
};

#define RUNRUN_WHERE (::runrun::SourceLocation{__FILE__, __LINE__})

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, SourceLocation where, const std::string& message);
  ErrorCode code() const { return code_; }
  // file:line of the throw, for logs; the user-facing text is what().
  const std::string& where() const { return where_; }

 private:
  ErrorCode code_;
  std::string where_;
};

#define RUNRUN_DEFINE_ERROR(Name, Code)                    \
  class Name : public Error {                              \
   public:                                                 \
    Name(SourceLocation where, const std::string& message) \
        : Error(ErrorCode::Code, where, message) {}        \
  }

RUNRUN_DEFINE_ERROR(InvalidArgumentError, kInvalidArgument);
RUNRUN_DEFINE_ERROR(MismatchError, kMismatch);
RUNRUN_DEFINE_ERROR(PeerFailureError, kPeerFailure);
RUNRUN_DEFINE_ERROR(TimeoutError, kTimeout);
RUNRUN_DEFINE_ERROR(ShutDownError, kShutDown);
RUNRUN_DEFINE_ERROR(InternalError, kInternal);
RUNRUN_DEFINE_ERROR(UnsupportedError, kUnsupported);

#undef RUNRUN_DEFINE_ERROR

// Throws the exception class that matches `code` (InvalidArgumentError for kInvalidArgument...),
// so that C++ callers can catch by type whatever code an error travelled with.
[[noreturn]] void throw_error(ErrorCode code, SourceLocation where, const std::string& message);

// Throws `ErrorType(where, message)` unless `condition` holds. For checks on user input or peer
// behaviour; programmer bugs (a broken internal contract, such as a call from a thread that does
// not own the state) are debug checks that abort: RUNRUN_DCHECK and RUNRUN_CHECK_OWNER_THREAD
// (common/debug_checks.h), on in the test build.
#define RUNRUN_ENFORCE(condition, ErrorType, message)                     \
  do {                                                                    \
    if (!(condition)) throw ::runrun::ErrorType(RUNRUN_WHERE, (message)); \
  } while (0)

}  // namespace runrun

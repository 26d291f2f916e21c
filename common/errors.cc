#include "common/errors.h"

namespace runrun {

std::string_view error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk:
      return "ok";
    case ErrorCode::kInvalidArgument:
      return "invalid argument";
    case ErrorCode::kMismatch:
      return "mismatch across ranks";
    case ErrorCode::kPeerFailure:
      return "peer failure";
    case ErrorCode::kTimeout:
      return "timeout";
    case ErrorCode::kShutDown:
      return "shut down";
    case ErrorCode::kInternal:
      return "internal error";
    case ErrorCode::kUnsupported:
      return "unsupported";
  }
  return "unknown";
}

void throw_error(ErrorCode code, SourceLocation where, const std::string& message) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      throw InvalidArgumentError(where, message);
    case ErrorCode::kMismatch:
      throw MismatchError(where, message);
    case ErrorCode::kPeerFailure:
      throw PeerFailureError(where, message);
    case ErrorCode::kTimeout:
      throw TimeoutError(where, message);
    case ErrorCode::kShutDown:
      throw ShutDownError(where, message);
    case ErrorCode::kUnsupported:
      throw UnsupportedError(where, message);
    case ErrorCode::kOk:
    case ErrorCode::kInternal:
      break;
  }
  throw InternalError(where, message);
}

Error::Error(ErrorCode code, SourceLocation where, const std::string& message)
    : std::runtime_error(message),
      code_(code),
      where_(std::string(where.file) + ":" + std::to_string(where.line)) {}

}  // namespace runrun

#include "core/common/errors.h"

namespace runrun {

std::string_view error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return "ok";
    case ErrorCode::kInvalidArgument: return "invalid argument";
    case ErrorCode::kMismatch: return "mismatch across ranks";
    case ErrorCode::kPeerFailure: return "peer failure";
    case ErrorCode::kTimeout: return "timeout";
    case ErrorCode::kShutDown: return "shut down";
    case ErrorCode::kInternal: return "internal error";
    case ErrorCode::kUnsupported: return "unsupported";
  }
  return "unknown";
}

Error::Error(ErrorCode code, SourceLocation where, const std::string& message)
    : std::runtime_error(message),
      code_(code),
      where_(std::string(where.file) + ":" + std::to_string(where.line)) {}

}  // namespace runrun

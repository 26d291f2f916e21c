#include "ops/mpi/mpi_check.h"

#include <string>

namespace runrun::mpi {

void throw_mpi_error(SourceLocation where, const char* call, int code, std::string_view op,
                     int rank) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
  int error_class = code;
  MPI_Error_class(code, &error_class);
  const std::string call_text(call);
  const std::string function = call_text.substr(0, call_text.find('('));
  throw PeerFailureError(
      where, std::string(op) + " on rank " + std::to_string(rank) + ": " + function +
                 " failed at " + where.file + ":" + std::to_string(where.line) + ": " +
                 std::string(text, static_cast<size_t>(length)) + " (MPI error class " +
                 std::to_string(error_class) +
                 "); a peer process probably died or the network failed: check the other ranks' "
                 "output");
}

}  // namespace runrun::mpi

#pragma once
// Why: the names a Horovod timeline uses, so tools and habits built on Horovod's timeline read
// runrun's unchanged (issue 39, point 13; docs/timeline.md): a tensor's row is
// `<op>.<tensor>` ("allreduce.grad0"), negotiation is `NEGOTIATE_<OP>`, the op itself `<OP>`
// with the transport's part `<BACKEND>_<OP>` inside it.
// Threading: pure functions.

#include <string>
#include <string_view>

#include "core/negotiation/message.h"

namespace runrun {

// "allreduce.<tensor>"; a name that already begins with "<op>." (runrun's own "allreduce.noname.3",
// as Horovod's) is kept as it is.
std::string timeline_row_name(OpType op, std::string_view tensor);
// "ALLREDUCE", "ALLGATHER", ... (the op in capitals).
std::string timeline_op_phase(OpType op);
// "NEGOTIATE_ALLREDUCE", ...
std::string timeline_negotiate_phase(OpType op);
// "<BACKEND>_<OP>" ("GLOO_ALLREDUCE", "MPI_BROADCAST"): the transport's part of the op.
std::string timeline_activity(std::string_view backend, OpType op);

}  // namespace runrun

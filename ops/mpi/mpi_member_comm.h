#pragma once
// Why: both halves of an mpi process set (MpiBackend and MpiControlChannel) split a communicator
// for the same members the same way: first every rank of the parent checks that all passed the
// same member list (a non-blocking allreduce, abortable), then the members create the new
// communicator. MPI_Comm_create_group has no non-blocking form, and a member stopped inside it
// (SIGSTOP, a debugger, a frozen host) would hold the others in it for ever, where neither
// abort() nor the peer monitor could reach them. So the creation runs on a helper thread while
// the calling thread waits the way MpiWaiter waits: an abort (a lost peer, shutdown) or the
// collective timeout ends the wait with the waiter's error, and the helper thread, still blocked
// in MPI, is abandoned: the waiter then keeps `parent` from being freed and MPI_Finalize from
// running at exit (both would touch what the helper still uses).
// Threading contract: called by the parent's one driving thread; the helper thread only makes
// the MPI call and stores its result in state it shares with that thread.

#include <mpi.h>

#include <vector>

#include "ops/mpi/mpi_waiter.h"

namespace runrun::mpi {

// Collective over `parent` (every rank passes the same sorted `ranks`, ranks of `parent`;
// MismatchError on every rank otherwise). Members get a new communicator of those ranks in the
// given order, other ranks MPI_COMM_NULL. `tag` separates concurrent creations (the backend's
// and the control channel's tags differ). `op` and `rank` name the call in errors.
MPI_Comm create_member_comm(MPI_Comm parent, const std::vector<int>& ranks, int tag,
                            MpiWaiter& waiter, const char* op, int rank);

}  // namespace runrun::mpi

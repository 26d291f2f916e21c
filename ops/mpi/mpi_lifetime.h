#pragma once
// Why: MPI can be initialized and finalized once per process, but a runrun runtime may be shut
// down and started again, and the application may own MPI itself (mpi4py, its own MPI_Init).
// So: initialize MPI (MPI_THREAD_MULTIPLE) only when nobody has, remember that we did, and
// finalize only at process exit (atexit), never when a backend is destroyed. When the
// application initialized MPI, we use it and never finalize it.
// This is the one piece of process-global state in ops/: MPI itself is process-global.
// Thread-safety: all functions may be called from any thread.

namespace runrun::mpi {

// Initializes MPI with MPI_THREAD_MULTIPLE unless it is initialized already. Throws
// UnsupportedError when MPI was already finalized in this process, or when MPI_Init_thread
// fails.
void ensure_initialized();

// Whether MPI is initialized (by anyone) and not finalized.
bool is_active();

// Whether MPI provides MPI_THREAD_MULTIPLE in this process. Initializes nothing: when MPI is
// initialized it reports MPI_Query_thread; when it is not (yet) initialized, or already
// finalized, it returns false, since no thread level has been granted to this process.
bool threads_multiple();

// After a peer process was lost MPI_Finalize may wait for it forever; this makes the
// exit-time finalize skip MPI_Finalize. Any thread.
void skip_finalize_at_exit();

// The provided thread level's name ("MPI_THREAD_MULTIPLE", ...), or "not initialized".
const char* thread_level_name();

}  // namespace runrun::mpi

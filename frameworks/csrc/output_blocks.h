#pragma once
// Why: the host outputs the fast path allocates for TensorFlow and JAX (host_buffers.h) are a
// little over 1 KiB for a 1 KiB tensor (header, alignment slack, data): above glibc's
// per-thread cache (1032 bytes), so each malloc went through the unsorted bins and cost
// ~1,800 instructions, more than the Python layer of the call (issue 12, point 6). A training
// step frees and allocates the same sizes again step after step, so freed blocks are kept here
// by exact size and handed out again. Bounded: blocks up to kMaxBlock bytes, kMaxBytes in all;
// the rest goes back to malloc. The cache lives for the whole process (never destroyed: a
// framework may free an output during interpreter teardown).
// Threading: any thread, with or without the GIL (frameworks free tensors on their own
// threads); one mutex.

#include <cstddef>

namespace runrun::python {

// A block of `size` bytes (malloc-aligned), from the cache or malloc; nullptr when out of
// memory.
void* take_output_block(std::size_t size);

// Gives back a block of `size` bytes from take_output_block: kept for reuse, or freed.
void give_output_block(void* block, std::size_t size);

}  // namespace runrun::python

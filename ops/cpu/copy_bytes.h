#pragma once
// Why: glibc's memcpy copies large blocks with `rep movsb`, and on some x86 CPUs (this
// project's AMD EPYC test machine among them) that runs ~14x slower when destination and
// source differ by a few words modulo 64 bytes (e.g. a page-aligned shared-memory slot and a
// malloc'd buffer, which sits 16 bytes into its page): 3 GB/s instead of 40 for 256 KiB in
// cache (docs/perf-notes/gloo.md, "memcpy and relative alignment"). The kernel's copy behind
// process_vm_readv has the same cliff. copy_bytes is memcpy where the two are 64-byte
// congruent (or the block is small) and a vector loop otherwise, as fast at every alignment.
// Thread-safety: a pure function over caller-owned buffers.

#include <cstddef>
#include <cstdint>

namespace runrun::cpu {

// memcpy(dst, src, bytes) at the same speed whatever the two addresses' relative alignment.
// The buffers must not overlap.
void copy_bytes(void* dst, const void* src, size_t bytes);

// Bytes to add to a 64-byte aligned `local` address so that it becomes congruent to `remote`
// modulo 64: a copy between the two then takes the fast path of memcpy and of the kernel.
inline size_t congruent_offset(const void* local, const void* remote) {
  return (reinterpret_cast<uintptr_t>(remote) - reinterpret_cast<uintptr_t>(local)) & 63;
}

}  // namespace runrun::cpu

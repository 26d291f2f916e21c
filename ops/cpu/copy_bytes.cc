#include "ops/cpu/copy_bytes.h"

#include <cstring>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace runrun::cpu {
namespace {

// Below this memcpy's own small-copy paths (vector moves, no `rep movsb`) are used.
constexpr size_t kLoopFromBytes = 2048;

}  // namespace

void copy_bytes(void* dst, const void* src, size_t bytes) {
#if defined(__x86_64__)
  auto* to = static_cast<char*>(dst);
  const auto* from = static_cast<const char*>(src);
  if (bytes < kLoopFromBytes || congruent_offset(to, from) == 0) {
    std::memcpy(dst, src, bytes);
    return;
  }
  size_t i = 0;
  for (; i + 64 <= bytes; i += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + i + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + i + 32));
    const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + i + 48));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(to + i), a);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(to + i + 16), b);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(to + i + 32), c);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(to + i + 48), d);
  }
  std::memcpy(to + i, from + i, bytes - i);
#else
  std::memcpy(dst, src, bytes);
#endif
}

}  // namespace runrun::cpu

// How the fused-hopper producer moves the bytes of one weight row and stage: the bulk copy engine
// needs 16-byte aligned addresses and sizes, GGUF rows are only 2-byte aligned, and a copy may not
// read outside the tensor. Host and device, so the CPU tests check the plan on any layout.
#pragma once
#include <cstdint>

#include "common/hd.hpp"

namespace strata::cuda::fused_hopper {

// Weight bytes [src, src + n) land at dst + (src - floor16(src)), so dst needs n + 30 bytes rounded
// up to 16. The part inside the 16-byte-aligned
// span of the tensor [lo, hi) goes by one bulk copy (returned as offset and size, not issued); the
// few bytes outside it (a tensor that does not start or end on 16 bytes) are copied here with
// ordinary loads and stores when store_rest. Returns the bulk copy's byte count (0: none).
STRATA_HD_INLINE uint32_t span_copy_plan(uint8_t* dst, const uint8_t* src, int n, const uint8_t* lo, const uint8_t* hi,
                                         bool store_rest, uint32_t& bulk_offset) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(src), e = a + static_cast<uintptr_t>(n);
  const uintptr_t base = a & ~uintptr_t{15};
  const uintptr_t lo16 = (reinterpret_cast<uintptr_t>(lo) + 15) & ~uintptr_t{15};
  const uintptr_t hi16 = reinterpret_cast<uintptr_t>(hi) & ~uintptr_t{15};
  const uintptr_t b0 = base > lo16 ? base : lo16;
  const uintptr_t end16 = (e + 15) & ~uintptr_t{15};
  const uintptr_t b1 = end16 < hi16 ? end16 : hi16;
  const bool bulk = b1 > b0;
  if (store_rest) {
    const uintptr_t head_end = bulk ? (b0 < e ? b0 : e) : e;  // [a, head_end) before the bulk span
    for (uintptr_t x = a; x < head_end; ++x) dst[x - base] = *reinterpret_cast<const uint8_t*>(x);
    if (bulk)
      for (uintptr_t x = b1 > a ? b1 : a; x < e; ++x) dst[x - base] = *reinterpret_cast<const uint8_t*>(x);
  }
  bulk_offset = bulk ? static_cast<uint32_t>(b0 - base) : 0u;
  return bulk ? static_cast<uint32_t>(b1 - b0) : 0u;
}

}  // namespace strata::cuda::fused_hopper

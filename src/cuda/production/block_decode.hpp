// Register-level block decoders for the production grouped GEMM, one specialisation per format.
//
// A decode is split in two so the kernel can software-pipeline it: load_raw() issues every
// global load of one 32-value sub-block at once (16-bit loads: GGUF rows are only 2-byte
// aligned, and 110- and 18-byte blocks keep every field 2-byte aligned within them), and
// decode() turns those registers into eight words of int8 codes (lowest k in the lowest byte)
// and the sub-block scale, after the tensor-core work of the current stage has been issued.
// NOTE: decode() must give the same codes and the same fp32 scale bits as F::decode_sub; the
// host build of these functions is checked against it.
//
//   template <> struct BlockDecoder<F> {
//     struct Raw;                                    // the sub-block's bytes, in registers
//     static constexpr int kTableWords;              // lookup table staged in shared memory (>= 1)
//     static constexpr int kMaxAbsCode;              // bound on |code| (for the exact int32->fp32 step)
//     static uint32_t table_word(int i);             // the table, read once per CTA
//     template <class Load = GlobalLoad>
//     static Raw load_raw(const uint8_t* block, int sub, Load load = {});  // Load: where the bytes are
//     static void decode(const Raw&, const uint32_t* table, uint32_t (&words)[8], float& scale);
//   };
#pragma once
#include <cstdint>
#include <cstring>

#include "common/bytes.hpp"
#include "common/hd.hpp"

namespace strata::cuda::production {

template <class F>
struct BlockDecoder;

// 16-bit little-endian load from a 2-byte aligned address, through the read-only path on device.
STRATA_HD_INLINE uint32_t load_u16_aligned(const uint8_t* p) {
#if STRATA_DEVICE_PASS
  return __ldg(reinterpret_cast<const unsigned short*>(p));
#else
  return load_u16le(p);
#endif
}

// Four bytes from two aligned 16-bit loads.
STRATA_HD_INLINE uint32_t load_u32_2aligned(const uint8_t* p) {
  return load_u16_aligned(p) | (load_u16_aligned(p + 2) << 16);
}

// Where load_raw reads a block: global memory through the read-only path (the default), or any
// address space through ordinary loads (blocks staged in shared memory).
struct GlobalLoad {
  STRATA_HD_INLINE uint32_t u16(const uint8_t* p) const { return load_u16_aligned(p); }
  STRATA_HD_INLINE uint32_t u32(const uint8_t* p) const { return load_u32_2aligned(p); }
};

struct PlainLoad {
  STRATA_HD_INLINE uint32_t u16(const uint8_t* p) const {
#if STRATA_DEVICE_PASS
    return *reinterpret_cast<const unsigned short*>(p);
#else
    return load_u16le(p);
#endif
  }
  STRATA_HD_INLINE uint32_t u32(const uint8_t* p) const { return u16(p) | (u16(p + 2) << 16); }
};

}  // namespace strata::cuda::production

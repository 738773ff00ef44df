// The device decoder contract of the q8 profile: one DeviceDecoder<F> per block format, host and
// device, read by every q8 CUDA arm (production, fused sm80, fused-hopper, fused-wmma).
//
// A decode is split in two so a kernel can software-pipeline it: load_raw() issues every load of
// one 32-value sub-block at once, and decode() turns those registers into eight words of int8
// codes (value 4i + j in byte j of words[i]) and the sub-block's fp32 scale, after the tensor-core
// work of the current stage has been issued.
//
//   template <> struct DeviceDecoder<F> {
//     struct Raw;                                // the sub-block's bytes (or where they are)
//     static constexpr int kTableWords;          // table a kernel stages in shared memory (>= 1)
//     static constexpr int kMaxAbsCode;          // bound on |code| (the exact int32 -> fp32 step)
//     static uint32_t table_word(int i);         // the table, read once per CTA
//     static const uint32_t* resident_table();   // the same table where it lives (unstaged)
//     template <class Load = GlobalLoad>         // Load: where the bytes are
//     static Raw load_raw(const uint8_t* block, int sub, Load load = {});
//     static void decode(const Raw&, const uint32_t* table, uint32_t (&words)[8], float& scale);
//   };
//
// The generic decoder below (GenericDecoder<F>, which DeviceDecoder<F> is unless a specialisation
// says otherwise) goes through the traits' own decode_sub (formats/<fmt>.hpp),
// so any Int8BlockFormat with one scale per sub-block and no offset is carried without writing a
// decoder. A fast specialisation (decode_<fmt>.hpp) must give the same codes and the same fp32
// scale bits as the generic one: tests/unit/device_decoder_test.cpp (host build) and
// tests/gpu/device_decoder_gpu_test.cpp (device build) check every bundled vector block.
// NOTE: blocks are only 2-byte aligned (GGUF offsets): loads are 16-bit at most.
#pragma once
#include <cstdint>

#include "common/bytes.hpp"
#include "common/hd.hpp"
#include "formats/format.hpp"

namespace strata::cuda::blocks {

// 16-bit little-endian load from a 2-byte aligned address, through the read-only path on CUDA.
STRATA_HD_INLINE uint32_t load_u16_aligned(const uint8_t* p) {
#if defined(__CUDA_ARCH__)
  return __ldg(reinterpret_cast<const unsigned short*>(p));
#elif STRATA_DEVICE_PASS
  return *reinterpret_cast<const unsigned short*>(p);
#else
  return load_u16le(p);
#endif
}

// Where load_raw reads a block: global memory through the read-only path (the default), or any
// address space through ordinary loads (blocks staged in shared memory).
struct GlobalLoad {
  STRATA_HD_INLINE uint32_t u16(const uint8_t* p) const { return load_u16_aligned(p); }
  STRATA_HD_INLINE uint32_t u32(const uint8_t* p) const { return u16(p) | (u16(p + 2) << 16); }
};

struct PlainLoad {
  STRATA_HD_INLINE uint32_t u16(const uint8_t* p) const {
#if STRATA_DEVICE_PASS
    return *reinterpret_cast<const unsigned short*>(p);
#else
    return load_u16le(p);
#endif
  }
  STRATA_HD_INLINE uint32_t u32(const uint8_t* p) const {
    return u16(p) | (u16(p + 2) << 16);
  }
};

// Four int8 codes as one word, the first in the lowest byte.
STRATA_HD_INLINE uint32_t pack_codes4(const int8_t* q) {
  return static_cast<uint32_t>(static_cast<uint8_t>(q[0])) |
         (static_cast<uint32_t>(static_cast<uint8_t>(q[1])) << 8) |
         (static_cast<uint32_t>(static_cast<uint8_t>(q[2])) << 16) |
         (static_cast<uint32_t>(static_cast<uint8_t>(q[3])) << 24);
}

// Generic: the traits' decode_sub, no table. Raw only remembers where the sub-block is, so the
// loads happen in decode() (slower than a specialisation, the same bits). Named apart so the
// tests can hold every specialisation against it.
template <class F>
struct GenericDecoder {
  static_assert(Int8BlockFormat<F>, "the q8 kernels read int8 codes: the format needs decode_sub");
  static_assert(!F::kSplitScales && !F::kHasOffset,
                "one scale per 32-value sub-block and no offset (extend the contract and the fold "
                "for others)");
  struct Raw {
    const uint8_t* block;
    int sub;
  };
  static constexpr int kTableWords = 1;    // no table
  static constexpr int kMaxAbsCode = 128;  // any int8 code

  STRATA_HD_INLINE static uint32_t table_word(int) { return 0u; }
  STRATA_HD_INLINE static const uint32_t* resident_table() { return nullptr; }

  template <class Load = GlobalLoad>
  STRATA_HD_INLINE static Raw load_raw(const uint8_t* block, int sub, Load = {}) {
    return {block, sub};
  }

  STRATA_HD_INLINE static void decode(const Raw& raw, const uint32_t*, uint32_t (&words)[8],
                                      float& scale) {
    int8_t q[kSubBlockValues];
    SubScale s;
    F::decode_sub(raw.block, raw.sub, q, s);
#if STRATA_DEVICE_PASS
#pragma unroll
#endif
    for (int i = 0; i < 8; ++i) words[i] = pack_codes4(q + 4 * i);
    scale = s.scale[0];
  }
};

// The decoder of format F: the generic one unless decode_<fmt>.hpp specialises it.
template <class F>
struct DeviceDecoder : GenericDecoder<F> {};

// One sub-block at once, for kernels that do not pipeline the decode (the wmma chain kernels, the
// tests): the table is the one decode() is given.
template <class F, class Decoder = DeviceDecoder<F>, class Load = PlainLoad>
STRATA_HD_INLINE float decode_sub_block(const uint8_t* block, int sub, const uint32_t* table,
                                        uint32_t (&words)[8]) {
  float scale;
  Decoder::decode(Decoder::load_raw(block, sub, Load{}), table, words, scale);
  return scale;
}

}  // namespace strata::cuda::blocks

// The fused-hopper producer's copy plan for one weight row and stage (cuda/fused_hopper/span_copy.hpp):
// on random tensors, rows and lengths, the bulk part plus the bytes stored by hand put every byte
// of the row where the consumers read it, and the bulk part is 16-byte aligned, inside the
// tensor's bytes and inside the shared slot.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "cuda/fused_hopper/span_copy.hpp"
#include "synth/synth.hpp"
#include "test_support.hpp"

namespace strata {
namespace {

TEST(HopperSpanCopy, BulkPlusStoredBytesPlaceEveryByteAndStayInBounds) {
  const uint64_t seed = test::fresh_seed("hopper_span_copy");
  SCOPED_TRACE("seed " + std::to_string(seed));
  synth::Rng rng(seed);
  constexpr size_t kArena = 8192;
  std::vector<uint8_t> arena(kArena + 64);
  uint8_t* base = arena.data() + (16 - reinterpret_cast<uintptr_t>(arena.data()) % 16) % 16;  // 16-aligned
  for (size_t i = 0; i < kArena; ++i) base[i] = static_cast<uint8_t>(rng.next());
  int64_t misplaced = 0, bulk_cases = 0, stored_cases = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    // A tensor [lo, hi) at any 2-byte offset, a row of n bytes inside it.
    const size_t lo_at = 2 * (rng.next() % 64), len = 2 + 2 * (rng.next() % 2000);
    const uint8_t* lo = base + lo_at;
    const uint8_t* hi = lo + len;
    const int n = 1 + static_cast<int>(rng.next() % (len < 300 ? len : 300));
    // Rows at the tensor's first and last bytes (where the aligned span cuts them) half the time.
    const size_t last = (len - static_cast<size_t>(n)) / 2;
    const uint64_t where = rng.next() % 4;
    const size_t start = 2 * (where == 0 ? 0 : where == 1 ? last : rng.next() % (last + 1));
    const uint8_t* src = lo + start;
    const int capacity = (n + 30 + 15) / 16 * 16;  // the slot size the kernel reserves
    std::vector<uint8_t> dst(static_cast<size_t>(capacity) + 32, 0xA5);
    uint32_t offset = 0;
    const uint32_t size = cuda::fused_hopper::span_copy_plan(dst.data(), src, n, lo, hi, true, offset);
    const uintptr_t row_base = reinterpret_cast<uintptr_t>(src) & ~uintptr_t{15};
    if (size > 0) {
      ++bulk_cases;
      const uintptr_t from = row_base + offset;
      ASSERT_EQ(from % 16, 0u);
      ASSERT_EQ(size % 16, 0u);
      ASSERT_GE(from, reinterpret_cast<uintptr_t>(lo));
      ASSERT_LE(from + size, reinterpret_cast<uintptr_t>(hi));
      ASSERT_LE(offset + size, static_cast<uint32_t>(capacity));
      std::memcpy(dst.data() + offset, reinterpret_cast<const uint8_t*>(from), size);  // the bulk copy
    }
    const uintptr_t a = reinterpret_cast<uintptr_t>(src), from = row_base + offset;
    if (size == 0 || from > a || from + size < a + static_cast<uintptr_t>(n)) ++stored_cases;  // some by hand
    const size_t skew = reinterpret_cast<uintptr_t>(src) - row_base;
    ASSERT_LE(skew + static_cast<size_t>(n), static_cast<size_t>(capacity));
    for (int i = 0; i < n; ++i) misplaced += dst[skew + static_cast<size_t>(i)] != src[i];
    for (size_t i = static_cast<size_t>(capacity); i < dst.size(); ++i) misplaced += dst[i] != 0xA5;  // no overrun
  }
  EXPECT_EQ(misplaced, 0);
  // Both paths were exercised.
  EXPECT_GT(bulk_cases, 1000);
  EXPECT_GT(stored_cases, 1000);
}

}  // namespace
}  // namespace strata

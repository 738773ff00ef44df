// The CUDA pipeline pieces against their CPU definitions: activation quantisation bit for bit
// with quantize_rows, the device grouping tables equal to group_by_expert, and the combine bit for
// bit with combine_step folded in slot order.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

#include "cuda/pipeline/combine.hpp"
#include "cuda/pipeline/grouping.hpp"
#include "cuda/pipeline/quantize_rows.hpp"
#include "gpu_test_util.hpp"
#include "pipeline/arith.hpp"
#include "pipeline/grouping.hpp"
#include "pipeline/quantize.hpp"
#include "synth/synth.hpp"
#include "test_support.hpp"

namespace strata {
namespace {

template <class T>
int64_t count_diffs(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return -1;
  int64_t n = 0;
  for (size_t i = 0; i < a.size(); ++i) n += std::memcmp(&a[i], &b[i], sizeof(T)) != 0;
  return n;
}

TEST(CudaQuantize, BitwiseEqualToQuantizeRows) {
  STRATA_REQUIRE_GPU();
  for (const auto& [rows, cols] : {std::pair<int64_t, int64_t>{1, 32}, {17, 256}, {203, 2560}}) {
    const uint64_t seed = test::fresh_seed("CudaQuantize");
    SCOPED_TRACE("seed " + std::to_string(seed) + " rows " + std::to_string(rows) + " cols " + std::to_string(cols));
    std::vector<float> x = synth::random_activations(rows, cols, seed);
    // One all-zero block and one block of exact ties (x/d = k + 0.5) in the first row.
    for (int i = 0; i < 32; ++i) x[i] = 0.0f;
    if (cols >= 64)
      for (int i = 0; i < 32; ++i) x[32 + i] = (i == 0) ? 127.0f : static_cast<float>(i % 7) + 0.5f;
    QuantizedRows cpu;
    quantize_rows(x.data(), rows, cols, cpu, 2);

    auto d_x = test::to_device(x);
    cuda::DeviceBuffer<int8_t> codes(rows * cols);
    cuda::DeviceBuffer<float> scales(rows * cols / 32);
    cuda::DeviceBuffer<int32_t> sums(rows * cols / 16);
    test::poison_device(scales.get(), rows * cols / 32);
    STRATA_CUDA_CHECK(cudaMemset(codes.get(), 0x80, rows * cols));
    STRATA_CUDA_CHECK(cudaMemset(sums.get(), 0xFF, rows * cols / 16 * sizeof(int32_t)));
    cuda::launch_quantize_rows(d_x.get(), rows, cols, codes.get(), scales.get(), sums.get(), nullptr);
    STRATA_CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_EQ(count_diffs(test::to_host(codes.get(), rows * cols), cpu.codes), 0);
    EXPECT_EQ(count_diffs(test::to_host(scales.get(), rows * cols / 32), cpu.scales), 0);
    EXPECT_EQ(count_diffs(test::to_host(sums.get(), rows * cols / 16), cpu.half_sums), 0);
  }
}

// y[t] = sum over slots j = 0..k-1 of w[t, j] * down[pair(t, j)], folded with combine_step from
// 0.0f in slot order. The cases cover both kernels (four columns per thread where d % 4 == 0 and the
// rows are 16-byte aligned, else one), k below, at and above the eight slots loaded at a time, and
// an output that starts one float past an allocation.
TEST(CudaCombine, BitwiseEqualToTheSlotOrderFold) {
  STRATA_REQUIRE_GPU();
  struct Case {
    int64_t n_tokens;
    int k;
    int64_t d;
    size_t y_offset;  // floats past the allocation
  };
  for (const Case& c : {Case{1, 1, 32, 0}, Case{37, 8, 2048, 0}, Case{19, 10, 2560, 0}, Case{23, 9, 256, 1},
                        Case{5, 3, 6, 0}, Case{64, 17, 512, 0}}) {
    const uint64_t seed = test::fresh_seed("CudaCombine");
    SCOPED_TRACE("seed " + std::to_string(seed) + " T " + std::to_string(c.n_tokens) + " k " + std::to_string(c.k) +
                 " d " + std::to_string(c.d) + " y offset " + std::to_string(c.y_offset));
    const int64_t P = c.n_tokens * c.k;
    const std::vector<float> down = synth::random_activations(P, c.d, seed);
    const std::vector<float> weights = synth::random_activations(c.n_tokens, c.k, seed + 1);
    std::vector<int32_t> slot_to_pair(static_cast<size_t>(P));
    std::iota(slot_to_pair.begin(), slot_to_pair.end(), 0);
    std::shuffle(slot_to_pair.begin(), slot_to_pair.end(), std::mt19937_64(seed + 2));
    std::vector<float> want(static_cast<size_t>(c.n_tokens * c.d));
    for (int64_t t = 0; t < c.n_tokens; ++t)
      for (int64_t col = 0; col < c.d; ++col) {
        float acc = 0.0f;
        for (int j = 0; j < c.k; ++j)
          acc = combine_step(acc, weights[t * c.k + j], down[slot_to_pair[t * c.k + j] * c.d + col]);
        want[t * c.d + col] = acc;
      }

    auto d_down = test::to_device(down);
    auto d_weights = test::to_device(weights);
    auto d_slots = test::to_device(slot_to_pair);
    cuda::DeviceBuffer<float> y(want.size() + c.y_offset);
    test::poison_device(y.get(), want.size() + c.y_offset);
    cuda::launch_combine(d_down.get(), d_slots.get(), d_weights.get(), c.n_tokens, c.k, c.d, y.get() + c.y_offset,
                         nullptr);
    STRATA_CUDA_CHECK(cudaGetLastError());
    STRATA_CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_EQ(count_diffs(test::to_host(y.get() + c.y_offset, want.size()), want), 0);
  }
}

struct GroupingCase {
  const char* name;
  int64_t n_tokens, n_expert;
  int k;
  int routing;  // 0 skewed, 1 uniform, 2 single expert
};

class CudaGrouping : public ::testing::TestWithParam<GroupingCase> {};

TEST_P(CudaGrouping, EqualsGroupByExpert) {
  STRATA_REQUIRE_GPU();
  const GroupingCase c = GetParam();
  const uint64_t seed = test::fresh_seed(c.name);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const synth::Routing r = c.routing == 0   ? synth::skewed_routing(c.n_tokens, c.n_expert, c.k, seed)
                           : c.routing == 1 ? synth::uniform_routing(c.n_tokens, c.n_expert, c.k, seed)
                                            : synth::single_expert_routing(c.n_tokens, c.n_expert, c.k, seed);
  const Grouping cpu = group_by_expert(r.ids.data(), c.n_tokens, c.k, c.n_expert);

  auto d_ids = test::to_device(r.ids);
  cuda::GroupingWorkspace ws;
  const size_t P = static_cast<size_t>(c.n_tokens * c.k), E = static_cast<size_t>(c.n_expert);
  for (const int tile_pairs : {32, 64}) {
    // Every table poisoned first (0xFF bytes: -1, which no table holds), so an entry the run leaves
    // unwritten fails.
    ws.reserve(c.n_tokens * c.k, c.n_expert);
    const cuda::DeviceGroupingTables before = ws.tables();
    for (int32_t* table : {before.pair_token, before.pair_slot, before.slot_to_pair})
      STRATA_CUDA_CHECK(cudaMemset(table, 0xFF, P * sizeof(int32_t)));
    for (int32_t* table : {before.expert_offsets, before.tile_offsets})
      STRATA_CUDA_CHECK(cudaMemset(table, 0xFF, (E + 1) * sizeof(int32_t)));
    const cuda::DeviceGroupingTables t =
        cuda::launch_group_by_expert(d_ids.get(), c.n_tokens, c.k, c.n_expert, tile_pairs, ws, nullptr);
    STRATA_CUDA_CHECK(cudaGetLastError());
    STRATA_CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_EQ(count_diffs(test::to_host(t.expert_offsets, E + 1), cpu.expert_offsets), 0);
    EXPECT_EQ(count_diffs(test::to_host(t.pair_token, P), cpu.pair_token), 0);
    EXPECT_EQ(count_diffs(test::to_host(t.pair_slot, P), cpu.pair_slot), 0);
    EXPECT_EQ(count_diffs(test::to_host(t.slot_to_pair, P), cpu.slot_to_pair), 0);
    std::vector<int32_t> tiles(E + 1, 0);
    for (size_t e = 0; e < E; ++e) tiles[e + 1] = tiles[e] + (cpu.expert_rows(e) + tile_pairs - 1) / tile_pairs;
    EXPECT_EQ(count_diffs(test::to_host(t.tile_offsets, E + 1), tiles), 0) << "tile_pairs " << tile_pairs;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, CudaGrouping,
                         ::testing::Values(GroupingCase{"one_token", 1, 8, 2, 1}, GroupingCase{"k1", 37, 16, 1, 0},
                                           GroupingCase{"skewed", 4096, 512, 10, 0},
                                           GroupingCase{"uniform_many_experts", 3000, 1500, 16, 1},
                                           GroupingCase{"single_expert", 777, 64, 4, 2},
                                           GroupingCase{"many_pairs", 16384, 256, 8, 1},
                                           GroupingCase{"many_experts_skewed", 700, 2047, 6, 0},
                                           GroupingCase{"more_experts_than_pairs", 700, 3000, 6, 1}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace strata

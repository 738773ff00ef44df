// The non-finite policy's checks: a NaN or Inf block scale anywhere in a layer's weights, and a
// non-finite value in a matrix, are refused with the tensor and the place named.
#include "pipeline/finite.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "cpu/moe_cpu.hpp"
#include "pipeline/arith.hpp"
#include "pipeline/arith_q10.hpp"
#include "synth/synth.hpp"
#include "synthetic_case.hpp"
#include "test_support.hpp"

namespace strata {
namespace {

constexpr uint16_t kF16Nan = 0x7E00;
constexpr uint16_t kF16Inf = 0x7C00;

void put_f16(uint8_t* p, uint16_t bits) {
  p[0] = static_cast<uint8_t>(bits & 0xFF);
  p[1] = static_cast<uint8_t>(bits >> 8);
}

// Message of the error fn throws (and a test failure when it throws none).
template <class Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::kInvalidArgument) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return "";
}

void expect_contains(const std::string& text, const std::string& needle) {
  EXPECT_NE(text.find(needle), std::string::npos) << "'" << text << "' lacks '" << needle << "'";
}

synth::LayerSpec small_spec(GgmlType gate, GgmlType down) {
  synth::LayerSpec spec;
  spec.d = 512;
  spec.f = 256;
  spec.n_expert = 8;
  spec.gate_type = spec.up_type = gate;
  spec.down_type = down;
  spec.seed = 7;
  return spec;
}

TEST(FiniteScales, SyntheticLayersPass) {
  for (GgmlType gate : {GgmlType::IQ3_S, GgmlType::Q4_K, GgmlType::Q4_1, GgmlType::MXFP4}) {
    const synth::SyntheticLayer layer = synth::make_layer(small_spec(gate, GgmlType::Q2_0));
    EXPECT_NO_THROW(require_finite_scales(layer.weights)) << ggml_type_name(gate);
  }
}

TEST(FiniteScales, NanAndInfScalesNameTensorExpertRowAndBlock) {
  for (const auto& [bits, word] : {std::pair{kF16Nan, "nan"}, std::pair{kF16Inf, "inf"}}) {
    synth::SyntheticLayer layer = synth::make_layer(small_spec(GgmlType::IQ3_S, GgmlType::Q2_0));
    // IQ3_S keeps its f16 d in bytes 0-1 of each 110-byte block; expert 3, row 5, block 1.
    const ExpertTensor& up = layer.weights.up;
    put_f16(const_cast<uint8_t*>(up.row(3, 5)) + 110, bits);
    const std::string message = error_of([&] { require_finite_scales(layer.weights, 2); });
    expect_contains(message, "synth.ffn_up_exps");
    expect_contains(message, "expert 3, row 5, block 1");
    expect_contains(message, word);
  }
  synth::SyntheticLayer layer = synth::make_layer(small_spec(GgmlType::IQ3_S, GgmlType::Q2_0));
  // Q2_0: 18-byte blocks of 64 values, f16 d first; the last block of the last row.
  const ExpertTensor& down = layer.weights.down;
  put_f16(const_cast<uint8_t*>(down.row(7, 511)) + 3 * 18, kF16Inf);
  const std::string message = error_of([&] { require_finite_scales(layer.weights, 1); });
  expect_contains(message, "synth.ffn_down_exps");
  expect_contains(message, "expert 7, row 511, block 3");
}

TEST(FiniteScales, NonFiniteOffsetTermIsRefused) {
  // Q4_1: d at bytes 0-1, the min (offset) at bytes 2-3 of each 20-byte block.
  synth::SyntheticLayer layer = synth::make_layer(small_spec(GgmlType::Q4_1, GgmlType::Q2_0));
  put_f16(const_cast<uint8_t*>(layer.weights.gate.row(0, 0)) + 2, kF16Nan);
  const std::string message = error_of([&] { require_finite_scales(layer.weights); });
  expect_contains(message, "synth.ffn_gate_exps");
  expect_contains(message, "expert 0, row 0, block 0");
}

TEST(FiniteScales, FirstBadExpertIsReportedWhateverTheThreads) {
  synth::SyntheticLayer layer = synth::make_layer(small_spec(GgmlType::IQ3_S, GgmlType::Q2_0));
  put_f16(const_cast<uint8_t*>(layer.weights.gate.row(6, 0)), kF16Nan);
  put_f16(const_cast<uint8_t*>(layer.weights.gate.row(2, 9)), kF16Nan);
  for (int threads : {1, 2, 4})
    expect_contains(error_of([&] { require_finite_scales(layer.weights, threads); }),
                    "expert 2, row 9, block 0");
}

// The scan at the demo's geometry, timed: it runs at every `strata-moe run` and C API layer
// creation, so it must stay a fraction of a second.
TEST(FiniteScales, FullSizeLayerScanTime) {
  synth::LayerSpec spec;  // d 2048, f 512, E 256; IQ3_S gate/up, Q2_0 down
  const synth::SyntheticLayer layer = synth::make_layer(spec);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NO_THROW(require_finite_scales(layer.weights));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("scan of a %.0f MB layer: %.3f s\n",
              (layer.gate_bytes.size() * 2 + layer.down_bytes.size()) / 1e6, seconds);
  EXPECT_LT(seconds, 5.0);
}

TEST(FiniteMatrix, NamesTheElement) {
  std::vector<float> m(6, 1.0f);
  EXPECT_NO_THROW(require_finite_matrix("router", m.data(), 2, 3));
  m[4] = -std::numeric_limits<float>::infinity();
  expect_contains(error_of([&] { require_finite_matrix("router", m.data(), 2, 3); }),
                  "router: element [1, 1] = -inf is not finite");
  try {
    require_finite_matrix("file", m.data(), 2, 3, Status::kBadFile);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::kBadFile);
  }
}

// ---- a NaN inside h (an overflow inside gate/up) reaches y (c_api_test.cpp: refused there) -----
TEST(FiniteRequant, ABlockHoldingANanHasANanScale) {
  std::mt19937 rng(static_cast<uint32_t>(test::fresh_seed("nan_block")));
  std::uniform_real_distribution<float> value(-3.0f, 3.0f);
  for (int at = 0; at < 64; ++at) {
    float x[64];
    for (float& v : x) v = value(rng);
    x[at] = NAN;
    int16_t q10[64];
    int32_t sums[4];
    float scale = 0.0f;
    quantize_block_q10(x, 64, q10, &scale, sums);
    // The canonical NaN, max.NaN.f32's, so that host and device give the same scale bits.
    EXPECT_EQ(std::bit_cast<uint32_t>(scale), 0x7FFFFFFFu) << "q10, NaN at " << at;
    if (at < 32) {
      int8_t q8[32];
      int32_t halves[2];
      quantize_block32(x, q8, &scale, halves);
      EXPECT_EQ(std::bit_cast<uint32_t>(scale), 0x7FFFFFFFu) << "q8, NaN at " << at;
    }
  }
  // The merge keeps a NaN from either side and is the plain max elsewhere.
  EXPECT_EQ(std::bit_cast<uint32_t>(quant_amax_merge(-NAN, 2.0f)), 0x7FFFFFFFu);
  EXPECT_EQ(std::bit_cast<uint32_t>(quant_amax_merge(2.0f, NAN)), 0x7FFFFFFFu);
  EXPECT_EQ(quant_amax_merge(2.0f, 3.0f), 3.0f);
  EXPECT_EQ(quant_amax_merge(3.0f, 2.0f), 3.0f);
  EXPECT_EQ(quant_amax_merge(0.0f, INFINITY), INFINITY);
}

TEST(FiniteRequant, GateOverflowGivesANanYOnEveryCpuArmAndProfile) {
  const uint64_t seed = test::fresh_seed("gate_overflow");
  SCOPED_TRACE("seed " + std::to_string(seed));
  const test::OverflowCase o = test::make_gate_overflow_case(seed);
  const MoeLayerWeights& w = o.c.layer.weights;
  const int64_t n_y = o.c.n_tokens * w.d, pairs = o.c.n_tokens * o.c.k;
  for (Numerics numerics : {Numerics::kQ8, Numerics::kQ10})
    for (Arm arm : {Arm::kProduction, Arm::kFused}) {
      SCOPED_TRACE(std::string(numerics == Numerics::kQ8 ? "q8 " : "q10 ") +
                   (arm == Arm::kFused ? "fused" : "production"));
      // Poisoned with a NaN pattern the run's NaN (the canonical one, positive) never has, so
      // that an element the arm leaves unwritten fails the count below.
      std::vector<float> y(static_cast<size_t>(n_y), std::bit_cast<float>(0xFFFFFFFFu));
      CpuDebugOutputs debug;
      run_layer_cpu(w, o.c.inputs(), arm, 2, y.data(), &debug, numerics);
      // The case is what it says: gate -inf and h NaN at the feature, h finite elsewhere.
      ASSERT_EQ(static_cast<int64_t>(debug.h.size()), pairs * w.f);
      int64_t nan_h = 0, other_non_finite = 0;
      for (int64_t p = 0; p < pairs; ++p)
        for (int64_t j = 0; j < w.f; ++j) {
          const float h = debug.h[p * w.f + j];
          if (j == o.feature) {
            EXPECT_EQ(debug.gate[p * w.f + j], -INFINITY);
            nan_h += std::isnan(h);
          } else {
            other_non_finite += !std::isfinite(h);
          }
        }
      EXPECT_EQ(nan_h, pairs);
      EXPECT_EQ(other_non_finite, 0);
      // Every pair's down product meets the NaN scale of that block: every y value is NaN.
      int64_t nan_y = 0, unwritten = 0;
      for (float v : y) {
        nan_y += std::isnan(v);
        unwritten += std::bit_cast<uint32_t>(v) == 0xFFFFFFFFu;
      }
      EXPECT_EQ(nan_y, n_y);
      EXPECT_EQ(unwritten, 0);
    }
}

}  // namespace
}  // namespace strata

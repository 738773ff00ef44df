// The non-finite policy's checks: a NaN or Inf block scale anywhere in a layer's weights, and a
// non-finite value in a matrix, are refused with the tensor and the place named.
#include "pipeline/finite.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <string>

#include "common/error.hpp"
#include "synth/synth.hpp"

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

}  // namespace
}  // namespace strata

// Activation quantisation of whole rows (the rule itself is quantize_block32 in arith.hpp).
#pragma once
#include <cstdint>
#include <vector>

namespace strata {

// Row-major int8 codes with one fp32 scale per 32 values and one code sum per 16 values.
struct QuantizedRows {
  int64_t rows = 0;
  int64_t cols = 0;                 // multiple of 32
  std::vector<int8_t> codes;        // [rows, cols]
  std::vector<float> scales;        // [rows, cols / 32]
  std::vector<int32_t> half_sums;   // [rows, cols / 16]
};

// x: [rows, cols] f32. Each row once, whatever the number of slots that read it.
void quantize_rows(const float* x, int64_t rows, int64_t cols, QuantizedRows& out, int threads);

}  // namespace strata

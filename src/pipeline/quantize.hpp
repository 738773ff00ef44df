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

// q10: int16 codes (|q| <= 511) with one fp32 scale per 64 values (the last block of a row may
// hold 32) and one code sum per 16 values.
struct QuantizedRowsQ10 {
  int64_t rows = 0;
  int64_t cols = 0;               // multiple of 32
  int64_t blocks_per_row = 0;     // ceil(cols / 64)
  std::vector<int16_t> codes;     // [rows, cols]
  std::vector<float> scales;      // [rows, blocks_per_row]
  std::vector<int32_t> sums;      // [rows, cols / 16]
};

void quantize_rows_q10(const float* x, int64_t rows, int64_t cols, QuantizedRowsQ10& out,
                       int threads);

}  // namespace strata

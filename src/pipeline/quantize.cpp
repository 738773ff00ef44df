#include "pipeline/quantize.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "pipeline/arith.hpp"
#include "pipeline/arith_q10.hpp"

namespace strata {

void quantize_rows(const float* x, int64_t rows, int64_t cols, QuantizedRows& out, int threads) {
  require(rows >= 0, Status::kInvalidArgument,
          fmt::format("quantize_rows: rows = {} is negative", rows));
  require(cols > 0 && cols % kSubBlockValues == 0, Status::kInvalidArgument,
          fmt::format("quantize_rows: cols = {} is not a positive multiple of 32", cols));
  require(rows == 0 || x != nullptr, Status::kInvalidArgument, "quantize_rows: x is null");
  const int64_t blocks_per_row = cols / kSubBlockValues;
  out.rows = rows;
  out.cols = cols;
  out.codes.resize(static_cast<size_t>(rows * cols));
  out.scales.resize(static_cast<size_t>(rows * blocks_per_row));
  out.half_sums.resize(static_cast<size_t>(rows * blocks_per_row * 2));
  // NOTE: each block is quantised by exactly one iteration, so the codes cannot depend on the
  // thread count.
#pragma omp parallel for schedule(static) \
    num_threads(threads > 0 ? threads : 1) if (rows * cols >= (1 << 16))
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t b = 0; b < blocks_per_row; ++b) {
      const int64_t block = r * blocks_per_row + b;
      quantize_block32(x + r * cols + b * kSubBlockValues,
                       out.codes.data() + r * cols + b * kSubBlockValues, &out.scales[block],
                       &out.half_sums[2 * block]);
    }
  }
}

void quantize_rows_q10(const float* x, int64_t rows, int64_t cols, QuantizedRowsQ10& out,
                       int threads) {
  require(rows >= 0, Status::kInvalidArgument,
          fmt::format("quantize_rows_q10: rows = {} is negative", rows));
  require(cols > 0 && cols % kSubBlockValues == 0, Status::kInvalidArgument,
          fmt::format("quantize_rows_q10: cols = {} is not a positive multiple of 32", cols));
  require(rows == 0 || x != nullptr, Status::kInvalidArgument, "quantize_rows_q10: x is null");
  const int64_t blocks_per_row = q10_blocks_per_row(cols);
  out.rows = rows;
  out.cols = cols;
  out.blocks_per_row = blocks_per_row;
  out.codes.resize(static_cast<size_t>(rows * cols));
  out.scales.resize(static_cast<size_t>(rows * blocks_per_row));
  out.sums.resize(static_cast<size_t>(rows * (cols / kQ10SumValues)));
  // NOTE: each block is quantised by exactly one iteration (see quantize_rows).
#pragma omp parallel for schedule(static) \
    num_threads(threads > 0 ? threads : 1) if (rows * cols >= (1 << 16))
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t b = 0; b < blocks_per_row; ++b) {
      const int64_t col = b * kQ10BlockValues;
      quantize_block_q10(x + r * cols + col, q10_block_values(cols, b),
                         out.codes.data() + r * cols + col, &out.scales[r * blocks_per_row + b],
                         &out.sums[r * (cols / kQ10SumValues) + col / kQ10SumValues]);
    }
  }
}

}  // namespace strata

// Per-format building blocks of the CPU arms: decode a tile of weight rows to int8 codes + sub
// scales once, then project many activation rows against it. One instantiation per format
// (visit_format), so arms compose gate, up and down formats freely without N^2 templates.
#pragma once
#include <cstdint>
#include <vector>

#include "formats/format.hpp"
#include "pipeline/layer.hpp"

namespace strata::cpu {

// A tile of decoded weight rows.
struct DecodedRows {
  int rows = 0;
  int64_t cols = 0;              // in_features, multiple of 32
  std::vector<int8_t> codes;     // [rows, cols]
  std::vector<SubScale> scales;  // [rows, cols / 32]
};

// Quantised activation rows (codes, per-32 scales, per-16 code sums), row-major.
struct ActivationView {
  const int8_t* codes = nullptr;       // [rows, cols]
  const float* scales = nullptr;       // [rows, cols / 32]
  const int32_t* half_sums = nullptr;  // [rows, cols / 16]
  int64_t cols = 0;
};

struct FormatOps {
  // Rows [row_begin, row_begin + rows) of `expert` into `out` (resized as needed).
  void (*decode_rows)(const ExpertTensor& tensor, int64_t expert, int64_t row_begin, int rows,
                      DecodedRows& out);
  // out[i * out_stride + r] = the fold of weight row r against activation row act_rows[i]
  // (sub slices in order, accumulator from 0.0f): the library's definition of one product.
  void (*project)(const DecodedRows& w, const ActivationView& a,
                  const int32_t* act_rows /*[n_act]*/, int n_act, float* out, int64_t out_stride);
};

// Throws Error(kUnsupported) naming `tensor_name` for a format the int8 path does not carry.
FormatOps format_ops(GgmlType type, const std::string& tensor_name);

// ---- q10 ------------------------------------------------------------------------------------
// A tile of weight rows in the format's wide decode.
struct WideRows {
  int rows = 0;
  int64_t cols = 0;                // in_features
  int span = 0;                    // S of the format
  std::vector<int16_t> w;          // [rows, cols] integer weights
  std::vector<WideScale> scales;   // [rows, cols / span]
};

// q10 activation rows (pipeline/quantize.hpp, QuantizedRowsQ10), row-major.
struct WideActivationView {
  const int16_t* codes = nullptr;  // [rows, cols]
  const float* scales = nullptr;   // [rows, blocks_per_row], one per 64 values
  const int32_t* sums = nullptr;   // [rows, cols / 16]
  int64_t cols = 0;
  int64_t blocks_per_row = 0;
};

struct WideFormatOps {
  void (*decode_rows)(const ExpertTensor& tensor, int64_t expert, int64_t row_begin, int rows,
                      WideRows& out);
  // out[i * out_stride + r] = the q10 fold of weight row r against activation row act_rows[i]:
  // spans in k order from 0.0f (pipeline/arith_q10.hpp, fold_span).
  void (*project)(const WideRows& w, const WideActivationView& a,
                  const int32_t* act_rows /*[n_act]*/, int n_act, float* out, int64_t out_stride);
  int span;  // S of the format
};

// Throws Error(kUnsupported) naming `tensor_name` for a format without a wide decode.
WideFormatOps wide_format_ops(GgmlType type, const std::string& tensor_name);
// The same with the plain scalar projection (the definition the vector path must reproduce; for
// tests).
WideFormatOps wide_format_ops_scalar(GgmlType type, const std::string& tensor_name);

}  // namespace strata::cpu

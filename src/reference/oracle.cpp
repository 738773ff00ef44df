#include "reference/oracle.hpp"

#include <fmt/format.h>
#include <cmath>

#include "common/error.hpp"
#include "formats/registry.hpp"
#include "pipeline/arith.hpp"
#include "pipeline/arith_q10.hpp"
#include "pipeline/grouping.hpp"
#include "pipeline/quantize.hpp"
#include "pipeline/routing.hpp"

namespace strata {
namespace {

// Below this many multiply-adds a parallel region costs more than it saves.
constexpr int64_t kParallelMin = int64_t{1} << 22;

enum class Mode {
  kExact,      // to_float weights, unquantised x and h
  kSameQuant,  // the profile's weight codes * scales (+ offsets), quantised x and requantised h
};

// Sum of a[i] * b[i] in double; four fixed lanes so the result does not depend on the compiler.
double dot(const double* a, const double* b, int64_t n) {
  double lanes[4] = {0.0, 0.0, 0.0, 0.0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int l = 0; l < 4; ++l) lanes[l] += a[i + l] * b[i + l];
  for (; i < n; ++i) lanes[0] += a[i] * b[i];
  return (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
}

// One expert's matrix [out_features, in_features] in double. Decoded per expert, never the
// whole tensor: a 256-expert layer in double would not fit a laptop.
void decode_expert(const ExpertTensor& t, int64_t expert, Mode mode, Numerics numerics,
                   std::vector<double>& out, int threads) {
  const FormatInfo* info = find_block_format(t.type);
  require(info != nullptr, Status::kUnsupported,
          fmt::format("tensor '{}': format not decodable", t.name));
  require(mode == Mode::kExact || numerics != Numerics::kQ8 || info->decode_sub != nullptr,
          Status::kUnsupported,
          fmt::format("tensor '{}': type {} has no int8 codes for the same-quantisation oracle",
                      t.name, info->name));
  require(mode == Mode::kExact || numerics != Numerics::kQ10 || info->decode_wide != nullptr,
          Status::kUnsupported,
          fmt::format("tensor '{}': type {} has no wide decode for the q10 same-quantisation oracle",
                      t.name, info->name));
  const int64_t blocks = t.in_features / info->block_values;
  const int subs = info->block_values / kSubBlockValues;
  out.resize(static_cast<size_t>(t.out_features * t.in_features));
#pragma omp parallel for schedule(static) \
    num_threads(threads) if (t.out_features * t.in_features >= kParallelMin)
  for (int64_t r = 0; r < t.out_features; ++r) {
    std::vector<float> values(static_cast<size_t>(info->block_values));
    std::vector<int16_t> w(static_cast<size_t>(info->wide_span));
    double* row_out = out.data() + r * t.in_features;
    for (int64_t b = 0; b < blocks; ++b) {
      const uint8_t* block = t.row(expert, r) + b * info->block_bytes;
      double* dst = row_out + b * info->block_values;
      if (mode == Mode::kExact) {
        info->decode(block, values.data());
        for (int i = 0; i < info->block_values; ++i) dst[i] = values[i];
        continue;
      }
      if (numerics == Numerics::kQ10) {
        for (int s = 0; s < info->block_values / info->wide_span; ++s) {
          WideScale sc;
          info->decode_wide(block, s, w.data(), sc);
          for (int i = 0; i < info->wide_span; ++i)
            dst[s * info->wide_span + i] = double{sc.scale} * w[i] + double{sc.offset};
        }
        continue;
      }
      for (int s = 0; s < subs; ++s) {
        int8_t q[kSubBlockValues];
        SubScale sc;
        info->decode_sub(block, s, q, sc);
        for (int i = 0; i < kSubBlockValues; ++i)
          dst[s * kSubBlockValues + i] =
              double{sc.scale[i / 16]} * q[i] + double{sc.offset[i / 16]};
      }
    }
  }
}

// Activations as the oracle sees them: x itself, or the profile's codes times their scales.
std::vector<double> activations(const float* x, int64_t rows, int64_t cols, Mode mode,
                                Numerics numerics, int threads) {
  std::vector<double> out(static_cast<size_t>(rows * cols));
  if (mode == Mode::kExact) {
    for (int64_t i = 0; i < rows * cols; ++i) out[i] = x[i];
    return out;
  }
  if (numerics == Numerics::kQ10) {
    QuantizedRowsQ10 q;
    quantize_rows_q10(x, rows, cols, q, threads);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        out[r * cols + c] = double{q.scales[r * q.blocks_per_row + c / kQ10BlockValues]} *
                            q.codes[r * cols + c];
    return out;
  }
  QuantizedRows q;
  quantize_rows(x, rows, cols, q, threads);
  for (int64_t i = 0; i < rows * cols; ++i)
    out[i] = double{q.scales[i / kSubBlockValues]} * q.codes[i];
  return out;
}

// h as the down product of the same-quantisation oracle sees it: each requantisation block of
// `block` (the arm's fp32 h when given, else (float) of the oracle's h) requantised by the
// profile's rule, times its scale.
void requantised_h(const double* h, const float* arm_h, int64_t f, Numerics numerics,
                   double* h_in) {
  std::vector<float> block(kQ10BlockValues);
  if (numerics == Numerics::kQ10) {
    int16_t codes[kQ10BlockValues];
    int32_t sums[kQ10BlockValues / kQ10SumValues];
    for (int64_t b = 0; b < q10_blocks_per_row(f); ++b) {
      const int64_t col = b * kQ10BlockValues;
      const int n = q10_block_values(f, b);
      for (int i = 0; i < n; ++i)
        block[i] = arm_h != nullptr ? arm_h[col + i] : static_cast<float>(h[col + i]);
      float scale;
      quantize_block_q10(block.data(), n, codes, &scale, sums);
      for (int i = 0; i < n; ++i) h_in[col + i] = double{scale} * codes[i];
    }
    return;
  }
  for (int64_t b = 0; b < f; b += kSubBlockValues) {
    int8_t codes[kSubBlockValues];
    float scale;
    int32_t half_sums[2];
    for (int i = 0; i < kSubBlockValues; ++i)
      block[i] = arm_h != nullptr ? arm_h[b + i] : static_cast<float>(h[b + i]);
    quantize_block32(block.data(), codes, &scale, half_sums);
    for (int i = 0; i < kSubBlockValues; ++i) h_in[b + i] = double{scale} * codes[i];
  }
}

OracleOutput run_oracle(const MoeLayerWeights& layer, const LayerInputs& in, Mode mode,
                        Numerics numerics, int threads, const float* arm_h) {
  validate_layer(layer);
  // NOTE: the oracles model the plain SwiGLU expert; a biased or SwiGLU-OAI layer is checked by
  // the block tests' own reference, never silently against the wrong model.
  require(layer.is_plain(), Status::kUnsupported,
          "oracle: layers with expert biases or a non-SwiGLU activation are not modelled here");
  require(in.x != nullptr, Status::kInvalidArgument, "x: null pointer");
  require(in.n_tokens >= 1, Status::kInvalidArgument,
          fmt::format("n_tokens: {} (must be >= 1)", in.n_tokens));
  require(in.k >= 1 && in.k <= layer.n_expert, Status::kInvalidArgument,
          fmt::format("k: {} (must be in [1, E = {}])", in.k, layer.n_expert));
  validate_routing(in.ids, in.weights, in.n_tokens, in.k, layer.n_expert, "ids", "weights");
  threads = threads > 0 ? threads : 1;
  const int64_t d = layer.d, f = layer.f, k = in.k, n_pairs = in.n_tokens * in.k;
  const std::vector<double> xa = activations(in.x, in.n_tokens, d, mode, numerics, threads);
  const Grouping g = group_by_expert(in.ids, in.n_tokens, in.k, layer.n_expert);

  OracleOutput out;
  out.gate.resize(static_cast<size_t>(n_pairs * f));
  out.up.resize(out.gate.size());
  out.h.resize(out.gate.size());
  std::vector<double> down(static_cast<size_t>(n_pairs * d));  // [(t, j), d]
  std::vector<double> wg, wu, wd;
  for (int64_t e = 0; e < layer.n_expert; ++e) {
    const int32_t first = g.expert_offsets[e], rows = g.expert_rows(e);
    if (rows == 0) continue;
    decode_expert(layer.gate, e, mode, numerics, wg, threads);
    decode_expert(layer.up, e, mode, numerics, wu, threads);
    decode_expert(layer.down, e, mode, numerics, wd, threads);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (rows * f * d >= kParallelMin)
    for (int32_t r = 0; r < rows; ++r) {
      const int64_t t = g.pair_token[first + r], slot = t * k + g.pair_slot[first + r];
      const double* xt = xa.data() + t * d;
      double* gate = out.gate.data() + slot * f;
      double* up = out.up.data() + slot * f;
      double* h = out.h.data() + slot * f;
      std::vector<double> h_in(static_cast<size_t>(f));  // h as the down product sees it
      for (int64_t c = 0; c < f; ++c) {
        gate[c] = dot(wg.data() + c * d, xt, d);
        up[c] = dot(wu.data() + c * d, xt, d);
        h[c] = gate[c] / (1.0 + std::exp(-gate[c])) * up[c];
        h_in[c] = h[c];
      }
      if (mode == Mode::kSameQuant)
        requantised_h(h, arm_h != nullptr ? arm_h + slot * f : nullptr, f, numerics, h_in.data());
      for (int64_t c = 0; c < d; ++c) down[slot * d + c] = dot(wd.data() + c * f, h_in.data(), f);
    }
  }
  out.y.assign(static_cast<size_t>(in.n_tokens * d), 0.0);
#pragma omp parallel for schedule(static) \
    num_threads(threads) if (in.n_tokens * k * d >= kParallelMin)
  for (int64_t t = 0; t < in.n_tokens; ++t)
    for (int j = 0; j < k; ++j) {
      const double w = in.weights[t * k + j];
      for (int64_t c = 0; c < d; ++c) out.y[t * d + c] += w * down[(t * k + j) * d + c];
    }
  return out;
}

}  // namespace

OracleOutput exact_oracle(const MoeLayerWeights& layer, const LayerInputs& in, int threads) {
  return run_oracle(layer, in, Mode::kExact, Numerics::kQ8, threads, nullptr);
}

OracleOutput same_quant_oracle(const MoeLayerWeights& layer, const LayerInputs& in, int threads,
                               const float* arm_h, Numerics numerics) {
  return run_oracle(layer, in, Mode::kSameQuant, numerics, threads, arm_h);
}

}  // namespace strata

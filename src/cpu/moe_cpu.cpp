#include "cpu/moe_cpu.hpp"

#include <fmt/format.h>
#include <omp.h>
#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/error.hpp"
#include "common/threads.hpp"
#include "cpu/tile_ops.hpp"
#include "pipeline/arith.hpp"
#include "pipeline/arith_q10.hpp"
#include "pipeline/grouping.hpp"
#include "pipeline/quantize.hpp"
#include "pipeline/routing.hpp"

namespace strata {
namespace {

using cpu::ActivationView;
using cpu::DecodedRows;
using cpu::FormatOps;
using cpu::WideActivationView;
using cpu::WideFormatOps;
using cpu::WideRows;

constexpr int kMaxTopK = 64;
// Below this many multiply-adds a parallel region costs more than it saves (never changes bits).
constexpr int64_t kParallelMin = int64_t{1} << 22;

// ---- the two profiles as policies: one arm body serves both -----------------------------------
// q8: int8 codes per 32 values, decode_sub tiles, fold per 32-wide slice (pipeline/arith.hpp).
struct Q8Profile {
  using Rows = QuantizedRows;
  using Ops = FormatOps;
  using Tile = DecodedRows;
  using View = ActivationView;
  // Features per requantisation block of h: a fused gate/up tile covers whole blocks.
  static constexpr int kRequantValues = kSubBlockValues;

  static Ops ops(const ExpertTensor& t) { return cpu::format_ops(t.type, t.name); }
  static void quantize(const float* x, int64_t rows, int64_t cols, Rows& out, int threads) {
    quantize_rows(x, rows, cols, out, threads);
  }
  static View view(const Rows& q) {
    return {q.codes.data(), q.scales.data(), q.half_sums.data(), q.cols};
  }
  static void resize(Rows& q, int64_t rows, int64_t cols) {
    q.rows = rows;
    q.cols = cols;
    q.codes.resize(static_cast<size_t>(rows * cols));
    q.scales.resize(static_cast<size_t>(rows * cols / kSubBlockValues));
    q.half_sums.resize(static_cast<size_t>(rows * cols / 16));
  }
  // h[0 .. n) of row `row` from column `col` (a block boundary) into q.
  static void quantize_block(const float* h, int n, Rows& q, int64_t row, int64_t col) {
    const int64_t block = row * (q.cols / kSubBlockValues) + col / kSubBlockValues;
    (void)n;  // always one whole 32-value block
    quantize_block32(h, q.codes.data() + row * q.cols + col, &q.scales[block],
                     &q.half_sums[2 * block]);
  }
};

// q10: int16 codes per 64 values, wide-decode tiles, fold per span (pipeline/arith_q10.hpp).
struct Q10Profile {
  using Rows = QuantizedRowsQ10;
  using Ops = WideFormatOps;
  using Tile = WideRows;
  using View = WideActivationView;
  static constexpr int kRequantValues = kQ10BlockValues;

  static Ops ops(const ExpertTensor& t) { return cpu::wide_format_ops(t.type, t.name); }
  static void quantize(const float* x, int64_t rows, int64_t cols, Rows& out, int threads) {
    quantize_rows_q10(x, rows, cols, out, threads);
  }
  static View view(const Rows& q) {
    return {q.codes.data(), q.scales.data(), q.sums.data(), q.cols, q.blocks_per_row};
  }
  static void resize(Rows& q, int64_t rows, int64_t cols) {
    q.rows = rows;
    q.cols = cols;
    q.blocks_per_row = q10_blocks_per_row(cols);
    q.codes.resize(static_cast<size_t>(rows * cols));
    q.scales.resize(static_cast<size_t>(rows * q.blocks_per_row));
    q.sums.resize(static_cast<size_t>(rows * cols / kQ10SumValues));
  }
  static void quantize_block(const float* h, int n, Rows& q, int64_t row, int64_t col) {
    quantize_block_q10(h, n, q.codes.data() + row * q.cols + col,
                       &q.scales[row * q.blocks_per_row + col / kQ10BlockValues],
                       &q.sums[row * (q.cols / kQ10SumValues) + col / kQ10SumValues]);
  }
};

// One unit of parallel work: `rows` weight rows of one expert against all of its pairs.
struct WorkItem {
  int32_t expert;
  int32_t row_begin;
  int32_t rows;
};

// Decoded tiles of about 32 KiB (L1/L2 resident while every pair of the expert streams past).
// NOTE: a tile size changes speed, never results: each output is one in-order fold.
int tile_rows_for(int64_t cols) {
  const int64_t rows = 32768 / cols;
  return static_cast<int>(std::clamp<int64_t>(rows - rows % 4, 4, 64));
}

// Only experts with pairs get work: an empty expert costs nothing.
std::vector<WorkItem> make_work(const Grouping& g, int64_t out_features, int tile_rows) {
  std::vector<WorkItem> items;
  for (int64_t e = 0; e < g.n_expert; ++e) {
    if (g.expert_rows(e) == 0) continue;
    for (int64_t r = 0; r < out_features; r += tile_rows)
      items.push_back({static_cast<int32_t>(e), static_cast<int32_t>(r),
                       static_cast<int32_t>(std::min<int64_t>(tile_rows, out_features - r))});
  }
  return items;
}

void validate_inputs(const MoeLayerWeights& layer, const LayerInputs& in, const float* y) {
  validate_layer(layer);
  require(in.x != nullptr, Status::kInvalidArgument, "x: null pointer");
  require(y != nullptr, Status::kInvalidArgument, "y: null pointer");
  require(in.n_tokens >= 1, Status::kInvalidArgument,
          fmt::format("n_tokens: {} (must be >= 1)", in.n_tokens));
  require(in.k >= 1 && in.k <= layer.n_expert && in.k <= kMaxTopK, Status::kInvalidArgument,
          fmt::format("k: {} (must be in [1, min(E = {}, {})])", in.k, layer.n_expert, kMaxTopK));
  validate_routing(in.ids, in.weights, in.n_tokens, in.k, layer.n_expert, "ids", "weights");
  const int64_t n = in.n_tokens * layer.d;
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(in.x[i]))  // NOTE: no require() here: it would format a message per element
      fail(Status::kInvalidArgument, fmt::format("x: element [{}, {}] = {} is not finite",
                                                 i / layer.d, i % layer.d, in.x[i]));
}

template <class P>
struct Prepared {
  Grouping grouping;
  typename P::Rows xq;
  std::vector<int32_t> pair_rows;  // [P] 0..P-1: down reads h rows in sorted-pair order
  typename P::Ops gate_ops, up_ops, down_ops;
};

template <class P>
Prepared<P> prepare(const MoeLayerWeights& layer, const LayerInputs& in, int threads) {
  Prepared<P> p;
  p.gate_ops = P::ops(layer.gate);
  p.up_ops = P::ops(layer.up);
  p.down_ops = P::ops(layer.down);
  P::quantize(in.x, in.n_tokens, layer.d, p.xq, threads);
  p.grouping = group_by_expert(in.ids, in.n_tokens, in.k, layer.n_expert);
  p.pair_rows.resize(p.grouping.pair_token.size());
  std::iota(p.pair_rows.begin(), p.pair_rows.end(), 0);
  return p;
}

// out[pair, r] for every pair of the tile's expert: [P sorted, out_features] row-major.
template <class P>
void project_stage(const ExpertTensor& tensor, const typename P::Ops& ops, const Grouping& g,
                   const typename P::View& act,
                   const int32_t* act_rows /*[P] activation row of each sorted pair*/, float* out,
                   int threads) {
  const std::vector<WorkItem> items =
      make_work(g, tensor.out_features, tile_rows_for(tensor.in_features));
  const int64_t n_items = static_cast<int64_t>(items.size());
  const int64_t work =
      static_cast<int64_t>(g.pair_token.size()) * tensor.in_features * tensor.out_features;
  // NOTE: each output element is written by one item in one fixed order; the schedule can only
  // change which thread runs it, never its bits.
#pragma omp parallel num_threads(threads) if (work >= kParallelMin)
  {
    typename P::Tile tile;
#pragma omp for schedule(dynamic, 1)
    for (int64_t i = 0; i < n_items; ++i) {
      const WorkItem& item = items[i];
      const int32_t first = g.expert_offsets[item.expert];
      ops.decode_rows(tensor, item.expert, item.row_begin, item.rows, tile);
      ops.project(tile, act, act_rows + first, g.expert_rows(item.expert),
                  out + first * tensor.out_features + item.row_begin, tensor.out_features);
    }
  }
}

// rows[p, c] += bias[e, c] for every sorted pair p of expert e (one fp32 add per element).
void add_expert_bias(const Grouping& g, const float* bias /*[E, cols]*/, int64_t cols,
                     float* rows /*[P sorted, cols]*/) {
  if (bias == nullptr) return;
  for (int64_t e = 0; e < g.n_expert; ++e) {
    const float* be = bias + e * cols;
    for (int32_t p = g.expert_offsets[e]; p < g.expert_offsets[e] + g.expert_rows(e); ++p)
      for (int64_t c = 0; c < cols; ++c) rows[p * cols + c] = rows[p * cols + c] + be[c];
  }
}

// tile[r, c] += bias[e, first_col + c] for a tile of one expert's rows.
void add_tile_bias(const float* bias /*[E, stride] or null*/, int64_t stride, int32_t expert,
                   int32_t first_col, int32_t rows, int32_t cols, float* tile /*[rows, cols]*/) {
  if (bias == nullptr) return;
  const float* be = bias + int64_t{expert} * stride + first_col;
  for (int32_t r = 0; r < rows; ++r)
    for (int32_t c = 0; c < cols; ++c) tile[r * cols + c] = tile[r * cols + c] + be[c];
}

// y[t, c] = sum_j w[t, j] * down_row(t, j)[c], in slot order from 0.0f.
template <class RowOf>
void combine(const LayerInputs& in, int64_t d, RowOf down_row, float* y, int threads) {
#pragma omp parallel for schedule(static) \
    num_threads(threads) if (in.n_tokens * in.k * d >= kParallelMin)
  for (int64_t t = 0; t < in.n_tokens; ++t) {
    float* yt = y + t * d;
    for (int64_t c = 0; c < d; ++c) yt[c] = 0.0f;
    for (int j = 0; j < in.k; ++j) {
      const float w = in.weights[t * in.k + j];
      const float* row = down_row(t, j);
      for (int64_t c = 0; c < d; ++c) yt[c] = combine_step(yt[c], w, row[c]);
    }
  }
}

// Sorted-pair rows -> (t, j) rows for the debug outputs.
void unsort_rows(const Grouping& g, const std::vector<float>& sorted, int64_t cols,
                 std::vector<float>& out) {
  out.resize(sorted.size());
  for (size_t p = 0; p < g.pair_token.size(); ++p) {
    const int64_t slot = static_cast<int64_t>(g.pair_token[p]) * g.k + g.pair_slot[p];
    std::copy_n(sorted.data() + p * cols, cols, out.data() + slot * cols);
  }
}

// ---- production: quantise -> gate -> up -> SwiGLU + requant -> down -> combine ----------------
template <class P>
void run_production(const MoeLayerWeights& layer, const LayerInputs& in, int threads, float* y,
                    CpuDebugOutputs* debug) {
  Prepared<P> p = prepare<P>(layer, in, threads);
  const Grouping& g = p.grouping;
  const int64_t n_pairs = in.n_tokens * in.k, f = layer.f, d = layer.d;
  const typename P::View x_view = P::view(p.xq);
  std::vector<float> gate(static_cast<size_t>(n_pairs * f)), up(gate.size()), h(gate.size());
  project_stage<P>(layer.gate, p.gate_ops, g, x_view, g.pair_token.data(), gate.data(), threads);
  project_stage<P>(layer.up, p.up_ops, g, x_view, g.pair_token.data(), up.data(), threads);
  add_expert_bias(g, layer.gate_bias, f, gate.data());
  add_expert_bias(g, layer.up_bias, f, up.data());
  const Activation act = layer.activation;
#pragma omp parallel for schedule(static) num_threads(threads) if (n_pairs * f >= kParallelMin)
  for (int64_t i = 0; i < n_pairs * f; ++i) h[i] = activate(act, gate[i], up[i]);
  typename P::Rows hq;
  P::quantize(h.data(), n_pairs, f, hq, threads);
  std::vector<float> down(static_cast<size_t>(n_pairs * d));
  project_stage<P>(layer.down, p.down_ops, g, P::view(hq), p.pair_rows.data(), down.data(),
                   threads);
  add_expert_bias(g, layer.down_bias, d, down.data());
  combine(
      in, d,
      [&](int64_t t, int j) { return down.data() + int64_t{g.slot_to_pair[t * in.k + j]} * d; }, y,
      threads);
  if (debug != nullptr) {
    unsort_rows(g, gate, f, debug->gate);
    unsort_rows(g, up, f, debug->up);
    unsort_rows(g, h, f, debug->h);
    unsort_rows(g, down, d, debug->down);
  }
}

// ---- fused: per expert tile, gate/up + SwiGLU + requant in one pass; then down per slot ------
template <class P>
void run_fused(const MoeLayerWeights& layer, const LayerInputs& in, int threads, float* y,
               CpuDebugOutputs* debug) {
  constexpr int kTile = P::kRequantValues;  // features per gate/up tile: whole requant blocks
  Prepared<P> p = prepare<P>(layer, in, threads);
  const Grouping& g = p.grouping;
  const int64_t n_pairs = in.n_tokens * in.k, f = layer.f, d = layer.d, k = in.k;
  const typename P::View x_view = P::view(p.xq);
  // h codes in sorted-pair order.
  typename P::Rows hq;
  P::resize(hq, n_pairs, f);
  if (debug != nullptr) {
    debug->gate.assign(static_cast<size_t>(n_pairs * f), NAN);
    debug->up.assign(debug->gate.size(), NAN);
    debug->h.assign(debug->gate.size(), NAN);
  }
  // NOTE: the last tile of a row is shorter when f is not a multiple of kTile; it is then one
  // whole (short) requantisation block of the profile.
  const std::vector<WorkItem> gate_up_items = make_work(g, f, kTile);
  const int64_t n_gate_up = static_cast<int64_t>(gate_up_items.size());
  const bool parallel = n_pairs * f * d >= kParallelMin;
#pragma omp parallel num_threads(threads) if (parallel)
  {
    typename P::Tile gate_tile, up_tile;
    std::vector<float> gate_out, up_out;  // [pairs of the expert, item rows]
#pragma omp for schedule(dynamic, 1)
    for (int64_t i = 0; i < n_gate_up; ++i) {
      const WorkItem& item = gate_up_items[i];
      const int32_t first = g.expert_offsets[item.expert], rows = g.expert_rows(item.expert);
      const int32_t* tokens = g.pair_token.data() + first;
      const int width = item.rows;
      p.gate_ops.decode_rows(layer.gate, item.expert, item.row_begin, width, gate_tile);
      p.up_ops.decode_rows(layer.up, item.expert, item.row_begin, width, up_tile);
      gate_out.resize(static_cast<size_t>(rows) * width);
      up_out.resize(gate_out.size());
      p.gate_ops.project(gate_tile, x_view, tokens, rows, gate_out.data(), width);
      p.up_ops.project(up_tile, x_view, tokens, rows, up_out.data(), width);
      add_tile_bias(layer.gate_bias, f, item.expert, item.row_begin, rows, width, gate_out.data());
      add_tile_bias(layer.up_bias, f, item.expert, item.row_begin, rows, width, up_out.data());
      for (int32_t r = 0; r < rows; ++r) {
        float h[kTile];
        for (int c = 0; c < width; ++c)
          h[c] = activate(layer.activation, gate_out[r * width + c], up_out[r * width + c]);
        const int64_t pair = first + r;
        P::quantize_block(h, width, hq, pair, item.row_begin);
        if (debug != nullptr) {
          const int64_t slot = int64_t{g.pair_token[pair]} * k + g.pair_slot[pair];
          for (int c = 0; c < width; ++c) {
            debug->gate[slot * f + item.row_begin + c] = gate_out[r * width + c];
            debug->up[slot * f + item.row_begin + c] = up_out[r * width + c];
            debug->h[slot * f + item.row_begin + c] = h[c];
          }
        }
      }
    }
  }
  // Down writes one row per (token, slot) directly, in (t, j) order.
  std::vector<float> down_slots(static_cast<size_t>(n_pairs * d));
  const std::vector<WorkItem> down_items = make_work(g, d, tile_rows_for(f));
  const int64_t n_down = static_cast<int64_t>(down_items.size());
  const typename P::View h_view = P::view(hq);
#pragma omp parallel num_threads(threads) if (parallel)
  {
    typename P::Tile tile;
    std::vector<float> out;  // [pairs of the expert, tile rows]
#pragma omp for schedule(dynamic, 1)
    for (int64_t i = 0; i < n_down; ++i) {
      const WorkItem& item = down_items[i];
      const int32_t first = g.expert_offsets[item.expert], rows = g.expert_rows(item.expert);
      p.down_ops.decode_rows(layer.down, item.expert, item.row_begin, item.rows, tile);
      out.resize(static_cast<size_t>(rows) * item.rows);
      p.down_ops.project(tile, h_view, p.pair_rows.data() + first, rows, out.data(), item.rows);
      add_tile_bias(layer.down_bias, d, item.expert, item.row_begin, rows, item.rows, out.data());
      for (int32_t r = 0; r < rows; ++r) {
        const int64_t slot = int64_t{g.pair_token[first + r]} * k + g.pair_slot[first + r];
        std::copy_n(out.data() + int64_t{r} * item.rows, item.rows,
                    down_slots.data() + slot * d + item.row_begin);
      }
    }
  }
  combine(
      in, d, [&](int64_t t, int j) { return down_slots.data() + (t * k + j) * d; }, y, threads);
  if (debug != nullptr) debug->down = std::move(down_slots);
}

template <class P>
void run_arm(const MoeLayerWeights& layer, const LayerInputs& in, Arm arm, int threads, float* y,
             CpuDebugOutputs* debug) {
  if (arm == Arm::kFused)
    run_fused<P>(layer, in, threads, y, debug);
  else
    run_production<P>(layer, in, threads, y, debug);
}

}  // namespace

void run_layer_cpu(const MoeLayerWeights& layer, const LayerInputs& in, Arm arm, int threads,
                   float* y, CpuDebugOutputs* debug, Numerics numerics) {
  validate_inputs(layer, in, y);
  const int n_threads = resolve_threads(threads);
  if (numerics == Numerics::kQ10)
    run_arm<Q10Profile>(layer, in, arm, n_threads, y, debug);
  else
    run_arm<Q8Profile>(layer, in, arm, n_threads, y, debug);
}

}  // namespace strata

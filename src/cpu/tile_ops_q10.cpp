// The q10 building blocks of the CPU arms: wide-decode a tile of weight rows once, then fold
// many activation rows against it span by span (pipeline/arith_q10.hpp).
#include <fmt/format.h>

#include <algorithm>

#include "common/error.hpp"
#include "cpu/fast_decode.hpp"
#include "cpu/tile_ops.hpp"
#include "cpu/wide_dot.hpp"
#include "formats/registry.hpp"
#include "pipeline/arith_q10.hpp"

namespace strata::cpu {
namespace {

// One span of the wide decode. Generic formats use their traits' decode_wide; where the CPU has an
// AVX2 int8 sub-block decoder (fast_decode.hpp) the span is built from it -- the codes widened to
// int16 (times the odd sub-scale for IQ3_S) -- which must give decode_wide's integers and
// factors exactly (cpu_q10_test compares them on random blocks).
template <class F>
struct WideSpanDecoder {
  static void decode(const uint8_t* block, int span, int16_t* w, WideScale& s) {
    F::decode_wide(block, span, w, s);
  }
};

#if defined(__AVX2__)
// The 32 int8 codes of q, times `multiplier`, as int16 into w[0..32).
inline void widen_codes(const int8_t* q, int multiplier, int16_t* w) {
  const __m256i m = _mm256_set1_epi16(static_cast<int16_t>(multiplier));
  const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
  const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(w),
                      _mm256_mullo_epi16(_mm256_cvtepi8_epi16(lo), m));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(w + 16),
                      _mm256_mullo_epi16(_mm256_cvtepi8_epi16(hi), m));
}

template <>
struct WideSpanDecoder<Iq3S> {
  static void decode(const uint8_t* block, int span, int16_t* w, WideScale& s) {
    int8_t q[kSubBlockValues];
    SubScale unused;
    for (int part = 0; part < 2; ++part) {
      const int sub = 2 * span + part;
      SubDecoder<Iq3S>::decode(block, sub, q, unused);
      widen_codes(q, Iq3S::sub_scale(block, sub), w + kSubBlockValues * part);
    }
    s.scale = load_fp16le(block);
    s.offset = 0.0f;
  }
};

template <>
struct WideSpanDecoder<Q2_0> {
  static void decode(const uint8_t* block, int span, int16_t* w, WideScale& s) {
    int8_t q[kSubBlockValues];
    SubScale factors;
    for (int part = 0; part < 2; ++part) {
      SubDecoder<Q2_0>::decode(block, 2 * span + part, q, factors);
      widen_codes(q, 1, w + kSubBlockValues * part);
    }
    s.scale = factors.scale[0];
    s.offset = 0.0f;
  }
};
#endif

template <class F>
void decode_rows_wide(const ExpertTensor& tensor, int64_t expert, int64_t row_begin, int rows,
                      WideRows& out) {
  constexpr int kSpan = F::kWideSpan;
  constexpr int kSpansPerBlock = F::kBlockValues / kSpan;
  const int64_t cols = tensor.in_features;
  const int64_t blocks = cols / F::kBlockValues;
  out.rows = rows;
  out.cols = cols;
  out.span = kSpan;
  out.w.resize(static_cast<size_t>(rows * cols));
  out.scales.resize(static_cast<size_t>(rows * (cols / kSpan)));
  for (int r = 0; r < rows; ++r) {
    const uint8_t* row = tensor.row(expert, row_begin + r);
    int16_t* w = out.w.data() + r * cols;
    WideScale* scales = out.scales.data() + r * (cols / kSpan);
    for (int64_t b = 0; b < blocks; ++b)
      for (int span = 0; span < kSpansPerBlock; ++span) {
        const int64_t s = b * kSpansPerBlock + span;
        WideSpanDecoder<F>::decode(row + b * F::kBlockBytes, span, w + s * kSpan, scales[s]);
      }
  }
}

// Activation code sum of span s (spans of kSpan values; sums are per 16).
template <int kSpan>
int32_t span_sum(const int32_t* sums, int64_t s) {
  int32_t total = 0;
  for (int i = 0; i < kSpan / kQ10SumValues; ++i) total += sums[s * (kSpan / kQ10SumValues) + i];
  return total;
}

template <class F>
void project_scalar(const WideRows& w, const WideActivationView& a, const int32_t* act_rows,
                    int n_act, float* out, int64_t out_stride) {
  constexpr int kSpan = F::kWideSpan;
  const int64_t n_spans = w.cols / kSpan;
  std::vector<int32_t> isum(static_cast<size_t>(n_spans));
  for (int i = 0; i < n_act; ++i) {
    const int64_t arow = act_rows[i];
    const int16_t* acodes = a.codes + arow * a.cols;
    const float* ascales = a.scales + arow * a.blocks_per_row;
    const int32_t* asums = a.sums + arow * (a.cols / kQ10SumValues);
    for (int r = 0; r < w.rows; ++r) {
      span_dots(w.w.data() + r * w.cols, acodes, n_spans, kSpan, isum.data());
      const WideScale* wscales = w.scales.data() + r * n_spans;
      float acc = 0.0f;
      for (int64_t s = 0; s < n_spans; ++s)
        acc = fold_span<F>(acc, static_cast<float>(isum[s]),
                           static_cast<float>(span_sum<kSpan>(asums, s)), wscales[s],
                           ascales[s * kSpan / kQ10BlockValues]);
      out[i * out_stride + r] = acc;
    }
  }
}

#if defined(__AVX2__)
// Eight activation rows per vector: per weight row and span, eight exact span dots reduced to
// one int32 vector, then the fold as eight lanes of _mm256_fmadd_ps -- per lane exactly
// fold_span<F> (fmaf(isum, w.scale * a_scale, acc), then the offset term), spans in k order.
template <class F>
void project_lanes(const WideRows& w, const WideActivationView& a, const int32_t* act_rows,
                   int n_act, float* out, int64_t out_stride) {
  constexpr int kSpan = F::kWideSpan;
  constexpr int kLanes = 8;
  constexpr int kVectors = kSpan / 16;
  const int64_t n_spans = w.cols / kSpan;
  std::vector<float> lane_scales(static_cast<size_t>(n_spans * kLanes));  // [span, lane]
  std::vector<float> lane_sums(F::kHasOffset ? lane_scales.size() : 0);   // [span, lane]
  for (int i0 = 0; i0 < n_act; i0 += kLanes) {
    const int lanes = std::min(kLanes, n_act - i0);
    const int16_t* acodes[kLanes];
    for (int l = 0; l < kLanes; ++l) {
      const int64_t arow = act_rows[i0 + std::min(l, lanes - 1)];  // spare lanes repeat a row
      acodes[l] = a.codes + arow * a.cols;
      const float* ascales = a.scales + arow * a.blocks_per_row;
      const int32_t* asums = a.sums + arow * (a.cols / kQ10SumValues);
      for (int64_t s = 0; s < n_spans; ++s) {
        lane_scales[s * kLanes + l] = ascales[s * kSpan / kQ10BlockValues];
        if constexpr (F::kHasOffset)
          lane_sums[s * kLanes + l] = static_cast<float>(span_sum<kSpan>(asums, s));
      }
    }
    for (int r = 0; r < w.rows; ++r) {
      const int16_t* wrow = w.w.data() + r * w.cols;
      const WideScale* wscales = w.scales.data() + r * n_spans;
      __m256 acc = _mm256_setzero_ps();
      for (int64_t s = 0; s < n_spans; ++s) {
        __m256i partials[kLanes];
        for (int l = 0; l < kLanes; ++l)
          partials[l] = span_partials(wrow + kSpan * s, acodes[l] + kSpan * s, kVectors);
        const __m256 isum = _mm256_cvtepi32_ps(lane_totals(partials));
        const __m256 ascale = _mm256_loadu_ps(&lane_scales[s * kLanes]);
        acc = _mm256_fmadd_ps(isum, _mm256_mul_ps(_mm256_set1_ps(wscales[s].scale), ascale), acc);
        if constexpr (F::kHasOffset)
          acc = _mm256_fmadd_ps(_mm256_loadu_ps(&lane_sums[s * kLanes]),
                                _mm256_mul_ps(_mm256_set1_ps(wscales[s].offset), ascale), acc);
      }
      float result[kLanes];
      _mm256_storeu_ps(result, acc);
      for (int l = 0; l < lanes; ++l) out[(i0 + l) * out_stride + r] = result[l];
    }
  }
}
#endif

template <class F>
void project_wide(const WideRows& w, const WideActivationView& a, const int32_t* act_rows,
                  int n_act, float* out, int64_t out_stride) {
#if defined(__AVX2__)
  project_lanes<F>(w, a, act_rows, n_act, out, out_stride);
#else
  project_scalar<F>(w, a, act_rows, n_act, out, out_stride);
#endif
}

template <bool kScalar>
WideFormatOps make_wide_ops(GgmlType type, const std::string& tensor_name) {
  WideFormatOps ops{nullptr, nullptr, 0};
  visit_format(type, [&](auto tag) {
    using F = typename decltype(tag)::Format;
    if constexpr (F::kWide)
      ops = WideFormatOps{&decode_rows_wide<F>, kScalar ? &project_scalar<F> : &project_wide<F>,
                          F::kWideSpan};
  });
  require(ops.project != nullptr, Status::kUnsupported,
          fmt::format("tensor '{}': type {} has no wide decode: the q10 profile cannot run it",
                      tensor_name, ggml_type_name(type)));
  return ops;
}

}  // namespace

WideFormatOps wide_format_ops(GgmlType type, const std::string& tensor_name) {
  return make_wide_ops<false>(type, tensor_name);
}

WideFormatOps wide_format_ops_scalar(GgmlType type, const std::string& tensor_name) {
  return make_wide_ops<true>(type, tensor_name);
}

}  // namespace strata::cpu

#include "cpu/tile_ops.hpp"

#include <fmt/format.h>
#include <algorithm>

#include "common/error.hpp"
#include "cpu/fast_decode.hpp"
#include "cpu/int8_dot.hpp"
#include "formats/registry.hpp"
#include "pipeline/arith.hpp"

namespace strata::cpu {
namespace {

template <class F>
void decode_rows(const ExpertTensor& tensor, int64_t expert, int64_t row_begin, int rows,
                 DecodedRows& out) {
  constexpr int kSubsPerBlock = F::kBlockValues / kSubBlockValues;
  const int64_t cols = tensor.in_features;
  const int64_t blocks = cols / F::kBlockValues;
  out.rows = rows;
  out.cols = cols;
  out.codes.resize(static_cast<size_t>(rows * cols));
  out.scales.resize(static_cast<size_t>(rows * (cols / kSubBlockValues)));
  for (int r = 0; r < rows; ++r) {
    const uint8_t* row = tensor.row(expert, row_begin + r);
    int8_t* codes = out.codes.data() + r * cols;
    SubScale* scales = out.scales.data() + r * (cols / kSubBlockValues);
    for (int64_t b = 0; b < blocks; ++b)
      for (int sub = 0; sub < kSubsPerBlock; ++sub) {
        const int64_t s = b * kSubsPerBlock + sub;
        SubDecoder<F>::decode(row + b * F::kBlockBytes, sub, codes + s * kSubBlockValues,
                              scales[s]);
      }
  }
}

// Four weight rows against one activation row at a time: four independent fp32 chains keep
// the fmaf latency hidden, and each chain is still the in-order fold of its own product.
template <class F>
void project_scalar(const DecodedRows& w, const ActivationView& a, const int32_t* act_rows,
                    int n_act, float* out, int64_t out_stride) {
  constexpr int kGroup = 4;
  const int n_sub = static_cast<int>(w.cols / kSubBlockValues);
  std::vector<int32_t> isum(static_cast<size_t>(kGroup * 2 * n_sub));
  for (int i = 0; i < n_act; ++i) {
    const int64_t arow = act_rows[i];
    const int8_t* acodes = a.codes + arow * a.cols;
    const float* ascales = a.scales + arow * (a.cols / kSubBlockValues);
    const int32_t* asums = a.half_sums + arow * (a.cols / 16);
    float* out_row = out + i * out_stride;
    for (int r0 = 0; r0 < w.rows; r0 += kGroup) {
      const int group = std::min(kGroup, w.rows - r0);
      for (int g = 0; g < group; ++g)
        dot_halves(w.codes.data() + (r0 + g) * w.cols, acodes, n_sub, isum.data() + g * 2 * n_sub);
      float acc[kGroup] = {0.0f, 0.0f, 0.0f, 0.0f};
      for (int s = 0; s < n_sub; ++s)
        for (int g = 0; g < group; ++g)
          acc[g] = fold_slice<F>(acc[g], isum.data() + g * 2 * n_sub + 2 * s, asums + 2 * s,
                                 w.scales[(r0 + g) * n_sub + s], ascales[s]);
      for (int g = 0; g < group; ++g) out_row[r0 + g] = acc[g];
    }
  }
}

#if defined(__AVX2__)
// Formats with one scale per sub-block and no offset: eight activation rows per vector, so the
// fold runs as eight lanes of _mm256_fmadd_ps. Per lane it is exactly fold_slice<F>:
// fmaf((float)(isum0 + isum1), w.scale * a_scale, acc) in sub order (cpu_tile_test checks).
template <class F>
void project_lanes(const DecodedRows& w, const ActivationView& a, const int32_t* act_rows,
                   int n_act, float* out, int64_t out_stride) {
  static_assert(!F::kSplitScales && !F::kHasOffset);
  constexpr int kLanes = 8;
  const int n_sub = static_cast<int>(w.cols / kSubBlockValues);
  const int64_t a_subs = a.cols / kSubBlockValues;
  const __m256i ones = _mm256_set1_epi16(1);
  std::vector<float> lane_scales(static_cast<size_t>(n_sub * kLanes));  // [sub, lane]
  for (int i0 = 0; i0 < n_act; i0 += kLanes) {
    const int lanes = std::min(kLanes, n_act - i0);
    const int8_t* acodes[kLanes];
    for (int l = 0; l < kLanes; ++l) {
      const int64_t arow =
          act_rows[i0 + std::min(l, lanes - 1)];  // spare lanes repeat a row, never stored
      acodes[l] = a.codes + arow * a.cols;
      for (int s = 0; s < n_sub; ++s) lane_scales[s * kLanes + l] = a.scales[arow * a_subs + s];
    }
    for (int r = 0; r < w.rows; ++r) {
      const int8_t* wrow = w.codes.data() + r * w.cols;
      const SubScale* wscales = w.scales.data() + r * n_sub;
      __m256 acc = _mm256_setzero_ps();
      for (int s = 0; s < n_sub; ++s) {
        const __m256i wv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wrow + 32 * s));
        const __m256i wabs = _mm256_abs_epi8(wv);
        __m256i p[kLanes];
        for (int l = 0; l < kLanes; ++l) {
          const __m256i av =
              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(acodes[l] + 32 * s));
          p[l] = _mm256_madd_epi16(_mm256_maddubs_epi16(wabs, _mm256_sign_epi8(av, wv)), ones);
        }
        // Eight 8-lane int32 vectors -> one vector of their eight totals (exact integer adds).
        const __m256i x =
            _mm256_hadd_epi32(_mm256_hadd_epi32(p[0], p[1]), _mm256_hadd_epi32(p[2], p[3]));
        const __m256i y =
            _mm256_hadd_epi32(_mm256_hadd_epi32(p[4], p[5]), _mm256_hadd_epi32(p[6], p[7]));
        const __m256i totals = _mm256_add_epi32(_mm256_permute2x128_si256(x, y, 0x20),
                                                _mm256_permute2x128_si256(x, y, 0x31));
        const __m256 scale = _mm256_mul_ps(_mm256_set1_ps(wscales[s].scale[0]),
                                           _mm256_loadu_ps(&lane_scales[s * kLanes]));
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(totals), scale, acc);
      }
      float result[kLanes];
      _mm256_storeu_ps(result, acc);
      for (int l = 0; l < lanes; ++l) out[(i0 + l) * out_stride + r] = result[l];
    }
  }
}
#endif

template <class F>
void project(const DecodedRows& w, const ActivationView& a, const int32_t* act_rows, int n_act,
             float* out, int64_t out_stride) {
#if defined(__AVX2__)
  if constexpr (!F::kSplitScales && !F::kHasOffset) {
    project_lanes<F>(w, a, act_rows, n_act, out, out_stride);
    return;
  }
#endif
  project_scalar<F>(w, a, act_rows, n_act, out, out_stride);
}

}  // namespace

FormatOps format_ops(GgmlType type, const std::string& tensor_name) {
  FormatOps ops{nullptr, nullptr};
  visit_format(type, [&](auto tag) {
    using F = typename decltype(tag)::Format;
    if constexpr (F::kInt8) ops = FormatOps{&decode_rows<F>, &project<F>};
  });
  require(ops.project != nullptr, Status::kUnsupported,
          fmt::format("tensor '{}': type {} has no int8 path on the CPU arms", tensor_name,
                      ggml_type_name(type)));
  return ops;
}

}  // namespace strata::cpu

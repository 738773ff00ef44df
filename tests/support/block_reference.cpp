#include "block_reference.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace strata::test {
namespace {

constexpr int64_t kQ8Bytes = 34;

// fp16 bits -> value, for the normal numbers random_q8 writes.
double half_value(uint16_t bits) {
  const int exponent = (bits >> 10) & 0x1F;
  const double mantissa = 1.0 + (bits & 0x3FF) / 1024.0;
  return ((bits & 0x8000) ? -1.0 : 1.0) * std::ldexp(mantissa, exponent - 15);
}

// The int8 activation rule, per 32 values: d = amax / 127 in fp32, q = roundf(x / d), clamped.
std::vector<double> quantised(const float* x, int64_t n) {
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t b = 0; b < n; b += 32) {
    float amax = 0.0f;
    for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[b + i]));
    const float d = amax / 127.0f;
    for (int i = 0; i < 32; ++i) {
      const float q = d == 0.0f ? 0.0f : std::clamp(std::round(x[b + i] / d), -127.0f, 127.0f);
      out[b + i] = static_cast<double>(d) * q;
    }
  }
  return out;
}

double act(bool oai, double g, double u) {
  if (!oai) return g / (1.0 + std::exp(-g)) * u;
  const double x = std::min(g, 7.0), y = std::clamp(u, -7.0, 7.0);
  return x / (1.0 + std::exp(-1.702 * x)) * (y + 1.0);
}

double dot(const float* a, const float* b, int64_t n) {
  double s = 0.0;
  for (int64_t i = 0; i < n; ++i) s += double{a[i]} * b[i];
  return s;
}

// Per token: scores s[e] and selection sel[e] (with groups masked to -inf), in double.
void reference_scores(const RefBlock& b, const float* xt, std::vector<double>& s,
                      std::vector<double>& sel, std::vector<char>& allowed_group, double eps) {
  const int64_t E = b.n_expert;
  std::vector<double> l(static_cast<size_t>(E));
  for (int64_t e = 0; e < E; ++e) {
    l[e] = dot(b.router.data() + e * b.d, xt, b.d);
    if (!b.router_bias.empty()) l[e] += b.router_bias[e];
  }
  s.assign(static_cast<size_t>(E), 0.0);
  if (b.score == RefScore::kSoftmax) {
    const double m = *std::max_element(l.begin(), l.end());
    double sum = 0.0;
    for (int64_t e = 0; e < E; ++e) sum += s[e] = std::exp(l[e] - m);
    for (double& v : s) v /= sum;
  } else if (b.score == RefScore::kSigmoid) {
    for (int64_t e = 0; e < E; ++e) s[e] = 1.0 / (1.0 + std::exp(-l[e]));
  } else {
    s = l;
  }
  sel = s;
  if (!b.selection_bias.empty())
    for (int64_t e = 0; e < E; ++e) sel[e] += b.selection_bias[e];
  allowed_group.assign(static_cast<size_t>(b.groups), 1);
  if (b.groups > 1) {
    const int64_t per = E / b.groups;
    std::vector<double> group_score(static_cast<size_t>(b.groups));
    for (int gi = 0; gi < b.groups; ++gi) {
      std::vector<double> members(sel.begin() + gi * per, sel.begin() + (gi + 1) * per);
      std::sort(members.rbegin(), members.rend());
      group_score[gi] = members[0] + members[1];
    }
    std::vector<double> sorted = group_score;
    std::sort(sorted.rbegin(), sorted.rend());
    const double threshold = sorted[b.groups_used - 1];
    for (int gi = 0; gi < b.groups; ++gi) {
      allowed_group[gi] = group_score[gi] >= threshold - eps;
      // Groups clearly outside the kept ones are masked; near-ties stay allowed.
      if (!allowed_group[gi])
        for (int64_t e = gi * per; e < (gi + 1) * per; ++e)
          sel[e] = -std::numeric_limits<double>::infinity();
    }
  }
}

}  // namespace

double Q8Weights::value(int64_t e, int64_t r, int64_t c) const {
  const uint8_t* block = bytes.data() + ((e * out + r) * (in / 32) + c / 32) * kQ8Bytes;
  const uint16_t scale_bits = static_cast<uint16_t>(block[0] | (block[1] << 8));
  return half_value(scale_bits) * static_cast<int8_t>(block[2 + c % 32]);
}

std::vector<uint8_t> Q8Weights::expert_bytes(int64_t e) const {
  const size_t per = static_cast<size_t>(out * (in / 32) * kQ8Bytes);
  return std::vector<uint8_t>(bytes.begin() + e * per, bytes.begin() + (e + 1) * per);
}

Q8Weights random_q8(int64_t in, int64_t out, int64_t experts, std::mt19937_64& rng) {
  Q8Weights w{in, out, experts, {}};
  w.bytes.resize(static_cast<size_t>(experts * out * (in / 32) * kQ8Bytes));
  std::uniform_int_distribution<int> code(-127, 127), exponent(6, 8), mantissa(0, 1023);
  for (size_t b = 0; b < w.bytes.size(); b += kQ8Bytes) {
    const uint16_t bits = static_cast<uint16_t>((exponent(rng) << 10) | mantissa(rng));
    w.bytes[b] = static_cast<uint8_t>(bits & 0xFF);
    w.bytes[b + 1] = static_cast<uint8_t>(bits >> 8);
    for (int i = 0; i < 32; ++i)
      w.bytes[b + 2 + i] = static_cast<uint8_t>(static_cast<int8_t>(code(rng)));
  }
  return w;
}

std::vector<float> random_floats(size_t n, double stddev, std::mt19937_64& rng) {
  std::normal_distribution<double> normal(0.0, stddev);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(normal(rng));
  return v;
}

std::vector<double> reference_weights(const RefBlock& b, const float* x, int64_t n_tokens,
                                      const int32_t* ids) {
  std::vector<double> w(static_cast<size_t>(n_tokens * b.k));
  std::vector<double> s, sel;
  std::vector<char> allowed;
  for (int64_t t = 0; t < n_tokens; ++t) {
    reference_scores(b, x + t * b.d, s, sel, allowed, 0.0);
    double* wt = w.data() + t * b.k;
    for (int j = 0; j < b.k; ++j) wt[j] = s[ids[t * b.k + j]];
    if (b.score == RefScore::kSoftmaxSelected) {
      const double m = *std::max_element(wt, wt + b.k);
      double sum = 0.0;
      for (int j = 0; j < b.k; ++j) sum += wt[j] = std::exp(wt[j] - m);
      for (int j = 0; j < b.k; ++j) wt[j] /= sum;
    }
    if (b.normalize) {
      double sum = 0.0;
      for (int j = 0; j < b.k; ++j) sum += wt[j];
      for (int j = 0; j < b.k; ++j) wt[j] /= std::max(sum, 6.103515625e-5);
    }
    for (int j = 0; j < b.k; ++j) wt[j] *= b.scale;
  }
  return w;
}

void check_routing(const RefBlock& b, const float* x, int64_t n_tokens, const int32_t* ids,
                   const float* weights, double eps) {
  std::vector<double> s, sel;
  std::vector<char> allowed;
  const std::vector<double> want = reference_weights(b, x, n_tokens, ids);
  const int64_t per = b.n_expert / b.groups;
  for (int64_t t = 0; t < n_tokens; ++t) {
    reference_scores(b, x + t * b.d, s, sel, allowed, eps);
    const int32_t* it = ids + t * b.k;
    double lowest = std::numeric_limits<double>::infinity();
    for (int j = 0; j < b.k; ++j) {
      ASSERT_GE(it[j], 0);
      ASSERT_LT(it[j], b.n_expert);
      EXPECT_TRUE(allowed[it[j] / per]) << "token " << t << " slot " << j << ": expert " << it[j]
                                        << " from a group the reference masks";
      for (int i = 0; i < j; ++i) ASSERT_NE(it[i], it[j]) << "token " << t << ": expert twice";
      lowest = std::min(lowest, sel[it[j]]);
    }
    for (int64_t e = 0; e < b.n_expert; ++e) {
      if (std::find(it, it + b.k, e) != it + b.k) continue;
      EXPECT_LE(sel[e], lowest + eps)
          << "token " << t << ": expert " << e << " scores above a chosen one";
    }
    for (int j = 0; j < b.k; ++j)
      // fp32 router dots and softmax against double: a few ulps of the logits, relative.
      EXPECT_NEAR(weights[t * b.k + j], want[t * b.k + j],
                  1e-5 * std::max(1.0, std::fabs(want[t * b.k + j])))
          << "token " << t << " slot " << j;
  }
}

RefExpertOut reference_expert(const Q8Weights& gate, const Q8Weights& up, const Q8Weights& down,
                              int64_t e, const std::vector<double>* gate_bias,
                              const std::vector<double>* up_bias,
                              const std::vector<double>* down_bias, bool oai, const float* x,
                              const float* arm_h) {
  const int64_t d = gate.in, f = gate.out;
  const std::vector<double> xq = quantised(x, d);
  RefExpertOut out;
  out.gate.resize(static_cast<size_t>(f));
  out.up.resize(out.gate.size());
  out.h.resize(out.gate.size());
  for (int64_t c = 0; c < f; ++c) {
    double g = 0.0, u = 0.0;
    for (int64_t i = 0; i < d; ++i) {
      g += gate.value(e, c, i) * xq[i];
      u += up.value(e, c, i) * xq[i];
    }
    if (gate_bias && !gate_bias->empty()) g += (*gate_bias)[e * f + c];
    if (up_bias && !up_bias->empty()) u += (*up_bias)[e * f + c];
    out.gate[c] = g;
    out.up[c] = u;
    out.h[c] = act(oai, g, u);
  }
  const std::vector<double> hq = quantised(arm_h, f);
  out.down.resize(static_cast<size_t>(d));
  for (int64_t c = 0; c < d; ++c) {
    double y = 0.0;
    for (int64_t i = 0; i < f; ++i) y += down.value(e, c, i) * hq[i];
    if (down_bias && !down_bias->empty()) y += (*down_bias)[e * d + c];
    out.down[c] = y;
  }
  return out;
}

std::vector<double> reference_block(const RefBlock& b, const float* x, int64_t n_tokens,
                                    const int32_t* ids, const std::vector<double>& weights,
                                    const std::vector<float>& routed_h,
                                    const std::vector<std::vector<float>>& shared_h) {
  std::vector<double> y(static_cast<size_t>(n_tokens * b.d), 0.0);
  for (int64_t t = 0; t < n_tokens; ++t) {
    const float* xt = x + t * b.d;
    for (int j = 0; j < b.k; ++j) {
      const int64_t slot = t * b.k + j;
      const RefExpertOut e =
          reference_expert(b.gate, b.up, b.down, ids[slot], &b.gate_bias, &b.up_bias, &b.down_bias,
                           b.oai, xt, routed_h.data() + slot * b.f);
      for (int64_t c = 0; c < b.d; ++c) y[t * b.d + c] += weights[slot] * e.down[c];
    }
    for (size_t i = 0; i < b.shared.size(); ++i) {
      const auto& s = b.shared[i];
      const RefExpertOut e = reference_expert(s.gate, s.up, s.down, 0, nullptr, nullptr, nullptr,
                                              false, xt, shared_h[i].data() + t * s.gate.out);
      const double scale =
          s.gate_inp.empty() ? 1.0 : 1.0 / (1.0 + std::exp(-dot(s.gate_inp.data(), xt, b.d)));
      for (int64_t c = 0; c < b.d; ++c) y[t * b.d + c] += scale * e.down[c];
    }
  }
  return y;
}

}  // namespace strata::test

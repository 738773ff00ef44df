#include "pipeline/routing.hpp"

#include <fmt/format.h>
#include <cmath>
#include <vector>

#include "common/error.hpp"
#include "pipeline/arith.hpp"

namespace strata {
namespace {

// One router logit in a fixed order: 8 interleaved fmaf lanes (lane l takes i = l mod 8), then a
// fixed pairwise tree. The order is part of the numerics (docs/numerics.md), not a choice of
// the compiler, so a GPU router can reproduce it.
float router_logit(const float* row /*[d]*/, const float* x /*[d]*/, int64_t d) {
  float lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= d; i += 8)
    for (int l = 0; l < 8; ++l) lanes[l] = std::fmaf(row[i + l], x[i + l], lanes[l]);
  for (int l = 0; i < d; ++i, ++l) lanes[l] = std::fmaf(row[i], x[i], lanes[l]);
  return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
         ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
}

// Indices of the k largest scores in descending order; equal scores go to the lower index.
void top_k(const float* scores /*[E]*/, int64_t n_expert, int k, int32_t* out /*[k]*/) {
  int count = 0;
  for (int64_t e = 0; e < n_expert; ++e) {
    const float s = scores[e];
    if (count == k && !(s > scores[out[k - 1]])) continue;
    int pos = count < k ? count++ : k - 1;
    // Strictly greater: an equal score already placed (lower id) stays ahead.
    while (pos > 0 && s > scores[out[pos - 1]]) {
      out[pos] = out[pos - 1];
      --pos;
    }
    out[pos] = static_cast<int32_t>(e);
  }
}

// p[e] = exp(l[e] - max) / sum, sum in index order.
void softmax(const float* logits, int64_t n, float* p) {
  float max_logit = logits[0];
  for (int64_t e = 1; e < n; ++e) max_logit = std::fmax(max_logit, logits[e]);
  float sum = 0.0f;
  for (int64_t e = 0; e < n; ++e) {
    p[e] = exp_f32(logits[e] - max_logit);
    sum += p[e];
  }
  for (int64_t e = 0; e < n; ++e) p[e] = p[e] / sum;
}

}  // namespace

void route_tokens(const float* router, const float* x, int64_t n_tokens, int64_t d,
                  int64_t n_expert, int k, Gating gating, int32_t* ids, float* weights,
                  int threads) {
  require(router != nullptr, Status::kInvalidArgument, "route_tokens: router is null");
  require(x != nullptr, Status::kInvalidArgument, "route_tokens: x is null");
  require(ids != nullptr && weights != nullptr, Status::kInvalidArgument,
          "route_tokens: ids/weights output is null");
  require(n_tokens >= 1 && d >= 1, Status::kInvalidArgument,
          fmt::format("route_tokens: T={} d={} must be positive", n_tokens, d));
  require(n_expert >= 1 && k >= 1 && k <= n_expert, Status::kInvalidArgument,
          fmt::format("route_tokens: k={} must be in [1, E={}]", k, n_expert));
#pragma omp parallel num_threads(threads > 0 ? threads : 1)
  {
    std::vector<float> logits(static_cast<size_t>(n_expert));
    std::vector<float> probs(static_cast<size_t>(n_expert));
#pragma omp for schedule(static)
    for (int64_t t = 0; t < n_tokens; ++t) {
      const float* xt = x + t * d;
      for (int64_t e = 0; e < n_expert; ++e) logits[e] = router_logit(router + e * d, xt, d);
      int32_t* out_ids = ids + t * k;
      float* out_w = weights + t * k;
      if (gating == Gating::kTopKSoftmax) {
        top_k(logits.data(), n_expert, k, out_ids);
        float picked[64];
        float* sel = k <= 64 ? picked : probs.data();
        for (int j = 0; j < k; ++j) sel[j] = logits[out_ids[j]];
        softmax(sel, k, out_w);
        continue;
      }
      softmax(logits.data(), n_expert, probs.data());
      top_k(probs.data(), n_expert, k, out_ids);
      float sum = 0.0f;
      for (int j = 0; j < k; ++j) {
        out_w[j] = probs[out_ids[j]];
        sum += out_w[j];
      }
      if (gating == Gating::kSoftmaxTopKRenorm)
        for (int j = 0; j < k; ++j) out_w[j] = out_w[j] / sum;
    }
  }
}

void validate_routing(const int32_t* ids, const float* weights, int64_t n_tokens, int k,
                      int64_t n_expert, const char* ids_name, const char* weights_name) {
  require(ids != nullptr, Status::kInvalidArgument, fmt::format("{}: null pointer", ids_name));
  require(weights != nullptr, Status::kInvalidArgument,
          fmt::format("{}: null pointer", weights_name));
  std::vector<int64_t> last_token(static_cast<size_t>(n_expert), -1);
  // NOTE: messages are formatted only on failure (this loop runs once per pair).
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int j = 0; j < k; ++j) {
      const int32_t e = ids[t * k + j];
      if (e < 0 || e >= n_expert)
        fail(Status::kInvalidArgument,
             fmt::format("{}: token {} slot {} names expert {}, outside [0, {})", ids_name, t, j, e,
                         n_expert));
      if (last_token[e] == t)
        fail(Status::kInvalidArgument,
             fmt::format("{}: token {} is routed to expert {} twice", ids_name, t, e));
      last_token[e] = t;
      const float w = weights[t * k + j];
      if (!std::isfinite(w))
        fail(Status::kInvalidArgument,
             fmt::format("{}: token {} slot {} weight {} is not finite", weights_name, t, j, w));
      if (w < 0.0f)
        fail(Status::kInvalidArgument,
             fmt::format("{}: token {} slot {} weight {} is negative", weights_name, t, j, w));
    }
  }
}

}  // namespace strata

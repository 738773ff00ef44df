#include "pipeline/routing.hpp"

#include <fmt/format.h>
#include <cmath>
#include <vector>

#include "common/error.hpp"
#include "pipeline/activation.hpp"
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

// The smallest positive normal fp16 (2^-14): llama.cpp's floor on the sum it normalises by.
constexpr float kNormFloor = 6.103515625e-5f;

// Keeps the n_group_used groups with the largest sum of their two best scores (ties to the
// lower group) and sets every other expert's selection score to -inf.
void mask_groups(float* sel /*[E]*/, int64_t n_expert, int n_group, int n_group_used,
                 float* group_scores /*[n_group]*/, int32_t* kept /*[n_group_used]*/) {
  const int64_t per_group = n_expert / n_group;
  for (int gi = 0; gi < n_group; ++gi) {
    int32_t best[2];
    top_k(sel + gi * per_group, per_group, 2, best);
    group_scores[gi] = sel[gi * per_group + best[0]] + sel[gi * per_group + best[1]];
  }
  top_k(group_scores, n_group, n_group_used, kept);
  for (int gi = 0; gi < n_group; ++gi) {
    bool keep = false;
    for (int j = 0; j < n_group_used; ++j) keep = keep || kept[j] == gi;
    if (!keep)
      for (int64_t e = gi * per_group; e < (gi + 1) * per_group; ++e) sel[e] = -INFINITY;
  }
}

}  // namespace

RoutingSpec routing_spec(Gating gating) {
  RoutingSpec spec;
  if (gating == Gating::kSoftmaxTopK) spec.normalize = false;
  if (gating == Gating::kTopKSoftmax) {
    spec.score = ScoreFunc::kSoftmaxSelected;
    spec.normalize = false;
  }
  return spec;
}

std::string describe_routing(const RoutingSpec& spec, int k, int64_t n_expert) {
  std::string out = spec.score == ScoreFunc::kSoftmax   ? "softmax"
                    : spec.score == ScoreFunc::kSigmoid ? "sigmoid"
                                                        : "softmax over the selected";
  out += fmt::format(", top-{} of {}", k, n_expert);
  if (spec.n_group > 1) out += fmt::format(" in {} of {} groups", spec.n_group_used, spec.n_group);
  if (spec.logit_bias != nullptr) out += ", router bias";
  if (spec.selection_bias != nullptr) out += ", selection bias";
  if (spec.normalize) out += ", normalised";
  if (spec.scale != 0.0f && spec.scale != 1.0f) out += fmt::format(", x{:g}", spec.scale);
  return out;
}

void validate_routing_spec(const RoutingSpec& spec, int64_t n_expert, int k) {
  require(n_expert >= 1 && k >= 1 && k <= n_expert, Status::kInvalidArgument,
          fmt::format("routing: k={} must be in [1, E={}]", k, n_expert));
  require(std::isfinite(spec.scale) && spec.scale >= 0.0f, Status::kInvalidArgument,
          fmt::format("routing: weight scale {} is not finite and non-negative", spec.scale));
  require(spec.n_group >= 1 && spec.n_group_used >= 1 && spec.n_group_used <= spec.n_group,
          Status::kInvalidArgument,
          fmt::format("routing: {} groups used of {} (need 1 <= used <= groups)", spec.n_group_used,
                      spec.n_group));
  if (spec.n_group == 1) return;
  require(n_expert % spec.n_group == 0 && n_expert / spec.n_group >= 2, Status::kInvalidArgument,
          fmt::format("routing: {} groups do not split E={} into groups of 2 or more experts",
                      spec.n_group, n_expert));
  require(k <= spec.n_group_used * (n_expert / spec.n_group), Status::kInvalidArgument,
          fmt::format("routing: k={} exceeds the {} experts of the {} groups kept", k,
                      spec.n_group_used * (n_expert / spec.n_group), spec.n_group_used));
}

void route_tokens(const float* router, const float* x, int64_t n_tokens, int64_t d,
                  int64_t n_expert, int k, const RoutingSpec& spec, int32_t* ids, float* weights,
                  int threads) {
  require(router != nullptr, Status::kInvalidArgument, "route_tokens: router is null");
  require(x != nullptr, Status::kInvalidArgument, "route_tokens: x is null");
  require(ids != nullptr && weights != nullptr, Status::kInvalidArgument,
          "route_tokens: ids/weights output is null");
  require(n_tokens >= 1 && d >= 1, Status::kInvalidArgument,
          fmt::format("route_tokens: T={} d={} must be positive", n_tokens, d));
  validate_routing_spec(spec, n_expert, k);
  const bool scaled = spec.scale != 0.0f && spec.scale != 1.0f;
#pragma omp parallel num_threads(threads > 0 ? threads : 1)
  {
    std::vector<float> scores(static_cast<size_t>(n_expert));
    std::vector<float> sel(static_cast<size_t>(n_expert));
    std::vector<float> picked(static_cast<size_t>(k));
    std::vector<float> group_scores(static_cast<size_t>(spec.n_group));
    std::vector<int32_t> kept(static_cast<size_t>(spec.n_group_used));
#pragma omp for schedule(static)
    for (int64_t t = 0; t < n_tokens; ++t) {
      const float* xt = x + t * d;
      for (int64_t e = 0; e < n_expert; ++e) {
        float l = router_logit(router + e * d, xt, d);
        if (spec.logit_bias != nullptr) l = l + spec.logit_bias[e];
        sel[e] = l;
      }
      if (spec.score == ScoreFunc::kSoftmax)
        softmax(sel.data(), n_expert, scores.data());
      else if (spec.score == ScoreFunc::kSigmoid)
        for (int64_t e = 0; e < n_expert; ++e) scores[e] = sigmoid_f32(sel[e]);
      else
        scores = sel;
      for (int64_t e = 0; e < n_expert; ++e)
        sel[e] = spec.selection_bias != nullptr ? scores[e] + spec.selection_bias[e] : scores[e];
      if (spec.n_group > 1)
        mask_groups(sel.data(), n_expert, spec.n_group, spec.n_group_used, group_scores.data(),
                    kept.data());
      int32_t* out_ids = ids + t * k;
      float* out_w = weights + t * k;
      top_k(sel.data(), n_expert, k, out_ids);
      for (int j = 0; j < k; ++j) picked[j] = scores[out_ids[j]];
      if (spec.score == ScoreFunc::kSoftmaxSelected)
        softmax(picked.data(), k, out_w);
      else
        for (int j = 0; j < k; ++j) out_w[j] = picked[j];
      if (spec.normalize) {
        float sum = 0.0f;
        for (int j = 0; j < k; ++j) sum += out_w[j];
        sum = std::fmax(sum, kNormFloor);
        for (int j = 0; j < k; ++j) out_w[j] = out_w[j] / sum;
      }
      if (scaled)
        for (int j = 0; j < k; ++j) out_w[j] = out_w[j] * spec.scale;
    }
  }
}

void route_tokens(const float* router, const float* x, int64_t n_tokens, int64_t d,
                  int64_t n_expert, int k, Gating gating, int32_t* ids, float* weights,
                  int threads) {
  route_tokens(router, x, n_tokens, d, n_expert, k, routing_spec(gating), ids, weights, threads);
}

void sigmoid_gate(const float* gate, const float* x, int64_t n_tokens, int64_t d, float* scale,
                  int threads) {
  require(gate != nullptr && x != nullptr && scale != nullptr, Status::kInvalidArgument,
          "sigmoid_gate: null pointer");
#pragma omp parallel for schedule(static) num_threads(threads > 0 ? threads : 1)
  for (int64_t t = 0; t < n_tokens; ++t) scale[t] = sigmoid_f32(router_logit(gate, x + t * d, d));
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

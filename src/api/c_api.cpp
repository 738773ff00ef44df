// The C API: argument checks, exception-to-status translation, dispatch to a LayerBackend.
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "api/backend.hpp"
#include "api/version.hpp"
#include "block/block.hpp"
#include "common/error.hpp"
#include "common/limits.hpp"
#include "formats/ggml_type.hpp"
#include "gguf/gguf.hpp"
#include "pipeline/finite.hpp"
#include "pipeline/routing.hpp"
#include "strata_moe.h"

struct strata_moe_layer {
  strata::MoeLayerWeights weights;
  std::unique_ptr<strata::LayerBackend> backend;
};

struct strata_moe_block {
  std::unique_ptr<strata::BlockRunner> runner;
};

namespace {

using strata::require;
using strata::Status;

static_assert(STRATA_MOE_INVALID_ARGUMENT == static_cast<int>(Status::kInvalidArgument) &&
                  STRATA_MOE_BAD_FILE == static_cast<int>(Status::kBadFile) &&
                  STRATA_MOE_UNSUPPORTED == static_cast<int>(Status::kUnsupported) &&
                  STRATA_MOE_IO == static_cast<int>(Status::kIo) &&
                  STRATA_MOE_CUDA == static_cast<int>(Status::kCuda) &&
                  STRATA_MOE_OUT_OF_MEMORY == static_cast<int>(Status::kOutOfMemory) &&
                  STRATA_MOE_INTERNAL == static_cast<int>(Status::kInternal),
              "strata_moe_status values must equal strata::Status");

thread_local std::string g_last_error;

strata_moe_status set_error(Status status, const char* message) {
  g_last_error = message;
  return static_cast<strata_moe_status>(status);
}

// Runs fn; every exception becomes a status and a message (none crosses into C).
template <class Fn>
strata_moe_status guarded(Fn&& fn) {
  try {
    fn();
    return STRATA_MOE_OK;
  } catch (const strata::Error& e) {
    return set_error(e.status(), e.what());
  } catch (const std::bad_alloc&) {
    return set_error(Status::kOutOfMemory, "out of memory (an allocation failed)");
  } catch (const std::exception& e) {
    return set_error(Status::kInternal, e.what());
  } catch (...) {
    return set_error(Status::kInternal, "unknown failure");
  }
}

strata::ExpertTensor tensor_from(const strata_moe_tensor_desc& t, const char* role) {
  const std::string name =
      t.name != nullptr ? fmt::format("{} ({})", role, t.name) : std::string(role);
  require(strata::ggml_type_info(t.ggml_type).has_value(), Status::kUnsupported,
          fmt::format("desc.{}: unknown ggml type id {}", name, t.ggml_type));
  require(t.data != nullptr, Status::kInvalidArgument, fmt::format("desc.{}: data is null", name));
  require(reinterpret_cast<uintptr_t>(t.data) % 2 == 0, Status::kInvalidArgument,
          fmt::format("desc.{}: data pointer {} is not 2-byte aligned", name, t.data));
  strata::limits::require_in_range(fmt::format("desc.{}: ne0", name), t.ne0, 1,
                                   strata::limits::kMaxWidth);
  strata::limits::require_in_range(fmt::format("desc.{}: ne1", name), t.ne1, 1,
                                   strata::limits::kMaxWidth);
  strata::limits::require_in_range(fmt::format("desc.{}: ne2", name), t.ne2, 1,
                                   strata::limits::kMaxExperts);
  strata::ExpertTensor out = strata::make_expert_tensor(fmt::format("desc.{}", name),
                                                        static_cast<strata::GgmlType>(t.ggml_type),
                                                        t.data, t.ne0, t.ne1, t.ne2);
  if (t.expert_stride_bytes != 0) {
    require(t.expert_stride_bytes >= out.row_bytes * static_cast<size_t>(t.ne1),
            Status::kInvalidArgument,
            fmt::format("desc.{}: expert_stride_bytes {} is smaller than one expert ({} bytes)",
                        name, t.expert_stride_bytes, out.row_bytes * static_cast<size_t>(t.ne1)));
    out.expert_stride_bytes = t.expert_stride_bytes;
  }
  return out;
}

// x, ids, weights and y are read and written as 4-byte values.
void require_aligned(const void* p, size_t alignment, const char* what) {
  require(reinterpret_cast<uintptr_t>(p) % alignment == 0, Status::kInvalidArgument,
          fmt::format("{}: pointer {} is not {}-byte aligned", what, p, alignment));
}

void require_threads(int threads, const char* what) {
  require(threads <= strata::limits::kMaxThreads, Status::kInvalidArgument,
          fmt::format("{}: {} is more than the limit of {}", what, threads,
                      strata::limits::kMaxThreads));
}

// Sizes of one call, before anything is read: T, k and their products within the limits.
void require_call_sizes(int64_t n_tokens, int k, int64_t d, int64_t n_expert) {
  strata::limits::require_in_range("n_tokens", n_tokens, 1, strata::limits::kMaxTokens);
  const int64_t max_k = std::min<int64_t>(n_expert, strata::limits::kMaxExpertsPerToken);
  require(k >= 1 && k <= max_k, Status::kInvalidArgument,
          fmt::format("k: {} (must be in [1, min(E = {}, {})])", k, n_expert,
                      strata::limits::kMaxExpertsPerToken));
  strata::limits::checked_product("n_tokens x k", n_tokens, k, strata::limits::kMaxPairs);
  strata::limits::checked_product("n_tokens x d", n_tokens, d,
                                  strata::limits::kMaxActivationValues);
}

// ---- arms and profiles: the C values, and the environment as the default of a call ----------

constexpr std::pair<strata_moe_arm, strata::Arm> kArmCodes[] = {
    {STRATA_MOE_ARM_PRODUCTION, strata::Arm::kProduction},
    {STRATA_MOE_ARM_FUSED, strata::Arm::kFused},
    {STRATA_MOE_ARM_FUSED_SM80, strata::Arm::kFusedSm80},
    {STRATA_MOE_ARM_FUSED_HOPPER, strata::Arm::kFusedHopper},
    {STRATA_MOE_ARM_FUSED_WMMA, strata::Arm::kFusedWmma},
};

strata_moe_arm arm_code(strata::Arm arm) {
  for (const auto& [code, a] : kArmCodes)
    if (a == arm) return code;
  return STRATA_MOE_ARM_DEFAULT;
}

// The run options of the library's layers: the caller's arm and profile, or the environment's
// (read here, at the API edge, and only for a field the caller left at DEFAULT).
strata::RunOptions resolve_options(const strata_moe_run_options& opt) {
  strata::RunOptions out;
  out.threads = opt.threads;
  out.cuda_stream = opt.cuda_stream;
  const bool arm_default = opt.arm == STRATA_MOE_ARM_DEFAULT;
  const bool numerics_default = opt.numerics == STRATA_MOE_NUMERICS_DEFAULT;
  if (!arm_default) {
    for (const auto& [code, a] : kArmCodes)
      if (code == opt.arm) out.arm = a;
    require(out.arm.has_value(), Status::kInvalidArgument,
            fmt::format("options.arm: unknown value {}", static_cast<int>(opt.arm)));
  }
  switch (opt.numerics) {
    case STRATA_MOE_NUMERICS_DEFAULT:
      break;
    case STRATA_MOE_NUMERICS_Q8:
      out.numerics = strata::Numerics::kQ8;
      break;
    case STRATA_MOE_NUMERICS_Q10:
      out.numerics = strata::Numerics::kQ10;
      break;
    default:
      strata::fail(Status::kInvalidArgument,
                   fmt::format("options.numerics: unknown value {}", static_cast<int>(opt.numerics)));
  }
  if (arm_default || numerics_default) {
    const strata::EnvDefaults env = strata::defaults_from_env();
    if (arm_default) out.arm = env.arm;
    if (numerics_default) out.numerics = env.numerics;
  }
  return out;
}

// Fills the caller's report (as far as its struct_size reaches) after a successful run.
void write_report(const strata_moe_run_options& opt, const strata::RunReport& ran) {
  strata_moe_run_report* r = opt.report;
  if (r == nullptr) return;
  require(r->struct_size >= offsetof(strata_moe_run_report, numerics) + sizeof(strata_moe_numerics),
          Status::kInvalidArgument,
          fmt::format("options.report->struct_size: {} (set it to sizeof(strata_moe_run_report) = {})",
                      r->struct_size, sizeof(strata_moe_run_report)));
  r->arm = arm_code(ran.arm);
  r->numerics = ran.numerics == strata::Numerics::kQ10 ? STRATA_MOE_NUMERICS_Q10 : STRATA_MOE_NUMERICS_Q8;
  if (r->struct_size >= offsetof(strata_moe_run_report, fallback) + sizeof(r->fallback)) {
    const size_t n = std::min(ran.fallback.size(), sizeof(r->fallback) - 1);
    std::memcpy(r->fallback, ran.fallback.data(), n);
    r->fallback[n] = '\0';
  }
}

// The caller's options, field by field as far as its struct_size reaches; defaults beyond.
strata_moe_run_options read_options(const strata_moe_run_options* options) {
  strata_moe_run_options out;
  strata_moe_run_options_init(&out);
  if (options == nullptr) return out;
  constexpr size_t kFirstVersionBytes = offsetof(strata_moe_run_options, cuda_stream) + sizeof(void*);
  require(options->struct_size >= kFirstVersionBytes, Status::kInvalidArgument,
          fmt::format("options.struct_size: {} (set it to sizeof(strata_moe_run_options) = {}, or "
                      "call strata_moe_run_options_init)",
                      options->struct_size, sizeof(strata_moe_run_options)));
  out.arm = options->arm;
  out.threads = options->threads;
  out.cuda_stream = options->cuda_stream;
  if (options->struct_size >= offsetof(strata_moe_run_options, numerics) + sizeof(strata_moe_numerics))
    out.numerics = options->numerics;
  if (options->struct_size >= offsetof(strata_moe_run_options, report) + sizeof(strata_moe_run_report*))
    out.report = options->report;
  return out;
}

strata::MoeLayerWeights layer_from(const strata_moe_layer_desc& desc, const std::string& role) {
  strata::MoeLayerWeights w;
  w.d = desc.d;
  w.f = desc.f;
  w.n_expert = desc.n_expert;
  w.gate = tensor_from(desc.gate, (role + ".gate").c_str());
  w.up = tensor_from(desc.up, (role + ".up").c_str());
  w.down = tensor_from(desc.down, (role + ".down").c_str());
  return w;
}

strata::MoeBlock block_from(const strata_moe_block_desc& desc) {
  strata::MoeBlock b;
  b.routed = layer_from(desc.routed, "routed");
  b.routed.gate_bias = desc.gate_bias;
  b.routed.up_bias = desc.up_bias;
  b.routed.down_bias = desc.down_bias;
  switch (desc.activation) {
    case STRATA_MOE_ACTIVATION_SWIGLU:
      break;
    case STRATA_MOE_ACTIVATION_SWIGLU_OAI:
      b.routed.activation.kind = strata::ActivationKind::kSwiGLUOai;
      if (desc.activation_alpha != 0.0f) b.routed.activation.alpha = desc.activation_alpha;
      if (desc.activation_limit != 0.0f) b.routed.activation.limit = desc.activation_limit;
      break;
    default:
      strata::fail(Status::kInvalidArgument,
                   fmt::format("desc.activation: unknown value {}", static_cast<int>(desc.activation)));
  }
  const strata_moe_routing_desc& r = desc.routing;
  b.router = r.router;
  b.k = r.k;
  switch (r.score) {
    case STRATA_MOE_SCORE_SOFTMAX:
      b.routing.score = strata::ScoreFunc::kSoftmax;
      break;
    case STRATA_MOE_SCORE_SIGMOID:
      b.routing.score = strata::ScoreFunc::kSigmoid;
      break;
    case STRATA_MOE_SCORE_SOFTMAX_SELECTED:
      b.routing.score = strata::ScoreFunc::kSoftmaxSelected;
      break;
    default:
      strata::fail(Status::kInvalidArgument,
                   fmt::format("desc.routing.score: unknown value {}", static_cast<int>(r.score)));
  }
  b.routing.normalize = r.normalize != 0;
  b.routing.scale = r.scale == 0.0f ? 1.0f : r.scale;
  b.routing.n_group = r.n_group > 1 ? r.n_group : 1;
  b.routing.n_group_used = r.n_group > 1 ? r.n_group_used : 1;
  b.routing.logit_bias = r.logit_bias;
  b.routing.selection_bias = r.selection_bias;
  require(desc.n_shared >= 0 && (desc.n_shared == 0 || desc.shared != nullptr),
          Status::kInvalidArgument, "desc.shared: null with n_shared > 0");
  for (int i = 0; i < desc.n_shared; ++i) {
    strata::SharedExpert s;
    s.ffn = layer_from(desc.shared[i].ffn, fmt::format("shared[{}]", i));
    s.gate = desc.shared[i].gate;
    b.shared.push_back(std::move(s));
  }
  return b;
}

}  // namespace

extern "C" {

const char* strata_moe_arm_name(strata_moe_arm arm) {
  if (arm == STRATA_MOE_ARM_DEFAULT) return "default";
  for (const auto& [code, a] : kArmCodes)
    if (code == arm) return strata::arm_name(a);
  return nullptr;
}

void strata_moe_run_options_init(strata_moe_run_options* options) {
  if (options == nullptr) return;
  *options = strata_moe_run_options{};
  options->struct_size = sizeof(strata_moe_run_options);
  options->arm = STRATA_MOE_ARM_DEFAULT;
  options->threads = 0;
  options->cuda_stream = nullptr;
  options->numerics = STRATA_MOE_NUMERICS_DEFAULT;
  options->report = nullptr;
}

const char* strata_moe_last_error(void) {
  return g_last_error.c_str();
}

strata_moe_status strata_moe_layer_create(strata_moe_backend backend,
                                          const strata_moe_layer_desc* desc,
                                          strata_moe_layer** layer) {
  return guarded([&] {
    require(layer != nullptr, Status::kInvalidArgument, "layer: null pointer");
    *layer = nullptr;
    require(desc != nullptr, Status::kInvalidArgument, "desc: null pointer");
    require(backend == STRATA_MOE_BACKEND_CPU || backend == STRATA_MOE_BACKEND_CUDA,
            Status::kInvalidArgument,
            fmt::format("backend: unknown value {}", static_cast<int>(backend)));
    auto out = std::make_unique<strata_moe_layer>();
    out->weights.d = desc->d;
    out->weights.f = desc->f;
    out->weights.n_expert = desc->n_expert;
    out->weights.gate = tensor_from(desc->gate, "gate");
    out->weights.up = tensor_from(desc->up, "up");
    out->weights.down = tensor_from(desc->down, "down");
    strata::validate_layer(out->weights);
    // Host weights are scanned once here (the non-finite policy); device weights cannot be read
    // from the host: strata_moe_check_weights() scans a host copy before it is uploaded.
    if (backend == STRATA_MOE_BACKEND_CPU) strata::require_finite_scales(out->weights);
    out->backend = backend == STRATA_MOE_BACKEND_CPU ? strata::make_cpu_backend(out->weights)
                                                     : strata::make_cuda_backend(out->weights);
    *layer = out.release();
  });
}

strata_moe_status strata_moe_layer_run(strata_moe_layer* layer, const float* x, const int32_t* ids,
                                       const float* weights, int64_t n_tokens, int k, float* y,
                                       const strata_moe_run_options* options) {
  return guarded([&] {
    require(layer != nullptr, Status::kInvalidArgument, "layer: null pointer");
    require(x != nullptr, Status::kInvalidArgument, "x: null pointer");
    require(ids != nullptr, Status::kInvalidArgument, "ids: null pointer");
    require(weights != nullptr, Status::kInvalidArgument, "weights: null pointer");
    require(y != nullptr, Status::kInvalidArgument, "y: null pointer");
    require_aligned(x, alignof(float), "x");
    require_aligned(ids, alignof(int32_t), "ids");
    require_aligned(weights, alignof(float), "weights");
    require_aligned(y, alignof(float), "y");
    require_call_sizes(n_tokens, k, layer->weights.d, layer->weights.n_expert);
    const strata_moe_run_options opt = read_options(options);
    require_threads(opt.threads, "options.threads");
    strata::LayerInputs in{x, ids, weights, n_tokens, k};
    const strata::RunReport ran = layer->backend->run(in, resolve_options(opt), y);
    // Device memory (a CUDA layer: the run is still in flight on its stream) is not read here.
    if (layer->backend->host_memory())
      strata::require_finite_result(y, n_tokens, layer->weights.d);
    write_report(opt, ran);
  });
}

void strata_moe_layer_destroy(strata_moe_layer* layer) {
  delete layer;  // null is a no-op
}

strata_moe_status strata_moe_check_weights(const strata_moe_layer_desc* desc) {
  return guarded([&] {
    require(desc != nullptr, Status::kInvalidArgument, "desc: null pointer");
    strata::MoeLayerWeights weights;
    weights.d = desc->d;
    weights.f = desc->f;
    weights.n_expert = desc->n_expert;
    weights.gate = tensor_from(desc->gate, "gate");
    weights.up = tensor_from(desc->up, "up");
    weights.down = tensor_from(desc->down, "down");
    strata::validate_layer(weights);
    strata::require_finite_scales(weights);
  });
}

strata_moe_status strata_moe_route(const float* router, const float* x, int64_t n_tokens, int64_t d,
                                   int64_t n_expert, int k, strata_moe_gating gating, int32_t* ids,
                                   float* weights, int threads) {
  return guarded([&] {
    strata::Gating rule = strata::Gating::kSoftmaxTopKRenorm;
    switch (gating) {
      case STRATA_MOE_GATING_SOFTMAX_TOPK_RENORM:
        rule = strata::Gating::kSoftmaxTopKRenorm;
        break;
      case STRATA_MOE_GATING_SOFTMAX_TOPK:
        rule = strata::Gating::kSoftmaxTopK;
        break;
      case STRATA_MOE_GATING_TOPK_SOFTMAX:
        rule = strata::Gating::kTopKSoftmax;
        break;
      default:
        strata::fail(Status::kInvalidArgument,
                     fmt::format("gating: unknown value {}", static_cast<int>(gating)));
    }
    require(router != nullptr, Status::kInvalidArgument, "router: null pointer");
    require(x != nullptr, Status::kInvalidArgument, "x: null pointer");
    require(ids != nullptr, Status::kInvalidArgument, "ids: null pointer");
    require(weights != nullptr, Status::kInvalidArgument, "weights: null pointer");
    require_aligned(router, alignof(float), "router");
    require_aligned(x, alignof(float), "x");
    require_aligned(ids, alignof(int32_t), "ids");
    require_aligned(weights, alignof(float), "weights");
    strata::limits::require_in_range("d", d, 1, strata::limits::kMaxWidth);
    strata::limits::require_in_range("n_expert", n_expert, 1, strata::limits::kMaxExperts);
    require_call_sizes(n_tokens, k, d, n_expert);
    require_threads(threads, "threads");
    // A NaN logit would otherwise surface as a complaint about the computed weights.
    strata::require_finite_matrix("router", router, n_expert, d);
    strata::require_finite_matrix("x", x, n_tokens, d);
    strata::route_tokens(router, x, n_tokens, d, n_expert, k, rule, ids, weights, threads);
  });
}

int strata_moe_cuda_device_count(void) {
  try {
    return strata::cuda_device_count();
  } catch (...) {
    return 0;
  }
}

strata_moe_status strata_moe_block_create(strata_moe_backend backend,
                                          const strata_moe_block_desc* desc,
                                          strata_moe_block** block) {
  return guarded([&] {
    require(block != nullptr, Status::kInvalidArgument, "block: null pointer");
    *block = nullptr;
    require(desc != nullptr, Status::kInvalidArgument, "desc: null pointer");
    require(backend == STRATA_MOE_BACKEND_CPU || backend == STRATA_MOE_BACKEND_CUDA,
            Status::kInvalidArgument,
            fmt::format("backend: unknown value {}", static_cast<int>(backend)));
    auto out = std::make_unique<strata_moe_block>();
    out->runner = std::make_unique<strata::BlockRunner>(
        block_from(*desc), backend == STRATA_MOE_BACKEND_CPU ? "cpu" : "cuda");
    *block = out.release();
  });
}

strata_moe_status strata_moe_block_run(strata_moe_block* block, const float* x, int64_t n_tokens,
                                       const int32_t* ids, const float* weights, float* y,
                                       int32_t* ids_out, float* weights_out,
                                       const strata_moe_run_options* options) {
  return guarded([&] {
    require(block != nullptr, Status::kInvalidArgument, "block: null pointer");
    require(x != nullptr, Status::kInvalidArgument, "x: null pointer");
    require(y != nullptr, Status::kInvalidArgument, "y: null pointer");
    require((ids == nullptr) == (weights == nullptr), Status::kInvalidArgument,
            "ids, weights: give both, or neither to route with the block's router");
    require_aligned(x, alignof(float), "x");
    require_aligned(y, alignof(float), "y");
    if (ids != nullptr) {
      require_aligned(ids, alignof(int32_t), "ids");
      require_aligned(weights, alignof(float), "weights");
    }
    const strata::MoeLayerWeights& routed = block->runner->block().routed;
    require_call_sizes(n_tokens, block->runner->block().k, routed.d, routed.n_expert);
    const strata_moe_run_options opt = read_options(options);
    require_threads(opt.threads, "options.threads");
    const strata::RunOptions run_options = resolve_options(opt);
    std::vector<int32_t> ids_used;
    std::vector<float> weights_used;
    const int k = block->runner->block().k;
    if (ids != nullptr && weights != nullptr)
      strata::validate_routing(ids, weights, n_tokens, k, block->runner->block().routed.n_expert,
                               "ids", "weights");
    write_report(opt, block->runner->run(x, n_tokens, ids, weights, k, run_options, y,
                                         ids_out ? &ids_used : nullptr, weights_out ? &weights_used : nullptr));
    if (ids_out != nullptr) std::copy(ids_used.begin(), ids_used.end(), ids_out);
    if (weights_out != nullptr) std::copy(weights_used.begin(), weights_used.end(), weights_out);
  });
}

void strata_moe_block_destroy(strata_moe_block* block) {
  delete block;
}

}  // extern "C"

// ---- engines: typed runs, workspace, GGUF files, version --------------------------------------

struct strata_moe_gguf {
  strata::gguf::File file;
  std::vector<strata::gguf::MoeLayerInfo> layers;
};

namespace {

constexpr size_t kRunArgsFirstVersionBytes =
    offsetof(strata_moe_run_args, options) + sizeof(const strata_moe_run_options*);
constexpr size_t kGgufLayerFirstVersionBytes =
    offsetof(strata_moe_gguf_layer, n_expert_used) + sizeof(int);

strata::DType dtype_from(strata_moe_dtype t) {
  return static_cast<strata::DType>(static_cast<int>(t));
}

// The caller's args checked field by field; struct_size must cover the first version.
strata::TypedRun typed_run_from(const strata_moe_run_args* args, bool with_arrays) {
  require(args != nullptr, Status::kInvalidArgument, "args: null pointer");
  require(args->struct_size >= kRunArgsFirstVersionBytes, Status::kInvalidArgument,
          fmt::format("args.struct_size: {} (set it to sizeof(strata_moe_run_args) = {}, or call "
                      "strata_moe_run_args_init)",
                      args->struct_size, sizeof(strata_moe_run_args)));
  strata::TypedRun run;
  run.x = args->x;
  run.x_dtype = dtype_from(args->x_dtype);
  run.ids = args->ids;
  run.ids_dtype = dtype_from(args->ids_dtype);
  run.weights = args->weights;
  run.weights_dtype = dtype_from(args->weights_dtype);
  run.y = args->y;
  run.y_dtype = dtype_from(args->y_dtype);
  run.n_tokens = args->n_tokens;
  run.k = args->k;
  run.workspace = args->workspace;
  run.workspace_bytes = args->workspace_bytes;
  if (with_arrays) {
    require(run.x != nullptr, Status::kInvalidArgument, "args.x: null pointer");
    require(run.ids != nullptr, Status::kInvalidArgument, "args.ids: null pointer");
    require(run.weights != nullptr, Status::kInvalidArgument, "args.weights: null pointer");
    require(run.y != nullptr, Status::kInvalidArgument, "args.y: null pointer");
  }
  return run;
}

// The dtype codes' element sizes (an unknown code is refused later, naming its field).
size_t element_bytes(strata::DType t) {
  const int code = static_cast<int>(t);
  return code >= 0 && code <= 4 ? static_cast<size_t>(strata::dtype_bytes(t)) : 1;
}

void require_typed_sizes(const strata::TypedRun& run, const strata_moe_layer& layer) {
  require_call_sizes(run.n_tokens, run.k, layer.weights.d, layer.weights.n_expert);
}

strata_moe_tensor_desc desc_from(const strata::ExpertTensor& t) {
  strata_moe_tensor_desc out{};
  out.ggml_type = static_cast<uint32_t>(t.type);
  out.data = t.data;
  out.ne0 = t.in_features;
  out.ne1 = t.out_features;
  out.ne2 = t.n_expert;
  out.expert_stride_bytes = t.expert_stride_bytes;
  out.name = t.name.c_str();
  return out;
}

}  // namespace

extern "C" {

void strata_moe_run_args_init(strata_moe_run_args* args) {
  if (args == nullptr) return;
  *args = strata_moe_run_args{};
  args->struct_size = sizeof(strata_moe_run_args);
  args->x_dtype = STRATA_MOE_DTYPE_F32;
  args->ids_dtype = STRATA_MOE_DTYPE_I32;
  args->weights_dtype = STRATA_MOE_DTYPE_F32;
  args->y_dtype = STRATA_MOE_DTYPE_F32;
}

strata_moe_status strata_moe_workspace_bytes(const strata_moe_layer* layer, const strata_moe_run_args* args,
                                             size_t* bytes) {
  return guarded([&] {
    require(bytes != nullptr, Status::kInvalidArgument, "bytes: null pointer");
    *bytes = 0;
    require(layer != nullptr, Status::kInvalidArgument, "layer: null pointer");
    const strata::TypedRun run = typed_run_from(args, false);
    require_typed_sizes(run, *layer);
    if (args->options != nullptr) {
      const strata_moe_run_options opt = read_options(args->options);
      *bytes = strata::typed_workspace_bytes(*layer->backend, layer->weights, run, resolve_options(opt));
      return;
    }
    // No options: enough for a run on any arm in either profile (the arms' scratch differs).
    size_t most = 0;
    for (strata::Arm arm : strata::kAllArms)
      for (strata::Numerics numerics : {strata::Numerics::kQ8, strata::Numerics::kQ10}) {
        strata::RunOptions any;
        any.arm = arm;
        any.numerics = numerics;
        try {
          most = std::max(most, strata::typed_workspace_bytes(*layer->backend, layer->weights, run, any));
        } catch (const strata::Error& e) {
          if (e.status() != Status::kUnsupported) throw;  // a profile no arm carries: nothing to size
        }
      }
    *bytes = most;
  });
}

strata_moe_status strata_moe_layer_run_ex(strata_moe_layer* layer, const strata_moe_run_args* args) {
  return guarded([&] {
    require(layer != nullptr, Status::kInvalidArgument, "layer: null pointer");
    const strata::TypedRun run = typed_run_from(args, true);
    require_typed_sizes(run, *layer);
    require_aligned(run.x, element_bytes(run.x_dtype), "args.x");
    require_aligned(run.ids, element_bytes(run.ids_dtype), "args.ids");
    require_aligned(run.weights, element_bytes(run.weights_dtype), "args.weights");
    require_aligned(run.y, element_bytes(run.y_dtype), "args.y");
    const strata_moe_run_options opt = read_options(args->options);
    require_threads(opt.threads, "options.threads");
    write_report(opt, strata::run_typed(*layer->backend, layer->weights, run, resolve_options(opt)));
  });
}

strata_moe_backend strata_moe_layer_backend(const strata_moe_layer* layer) {
  return layer != nullptr && std::strcmp(layer->backend->name(), "cuda") == 0 ? STRATA_MOE_BACKEND_CUDA
                                                                               : STRATA_MOE_BACKEND_CPU;
}

strata_moe_status strata_moe_tensor_span_bytes(const strata_moe_tensor_desc* tensor, size_t* bytes) {
  return guarded([&] {
    require(bytes != nullptr, Status::kInvalidArgument, "bytes: null pointer");
    *bytes = 0;
    require(tensor != nullptr, Status::kInvalidArgument, "tensor: null pointer");
    const strata::ExpertTensor t = tensor_from(*tensor, "tensor");
    require(t.n_expert >= 1, Status::kInvalidArgument, "tensor.ne2: no experts");
    *bytes = t.span_bytes();
  });
}

strata_moe_status strata_moe_gguf_open(const char* path, strata_moe_gguf** file) {
  return guarded([&] {
    require(file != nullptr, Status::kInvalidArgument, "file: null pointer");
    *file = nullptr;
    require(path != nullptr, Status::kInvalidArgument, "path: null pointer");
    strata::gguf::File opened = strata::gguf::File::open(path);
    std::vector<strata::gguf::MoeLayerInfo> layers = strata::gguf::discover_moe_layers(opened);
    *file = new strata_moe_gguf{std::move(opened), std::move(layers)};
  });
}

void strata_moe_gguf_close(strata_moe_gguf* file) {
  delete file;
}

strata_moe_status strata_moe_gguf_moe_layers(const strata_moe_gguf* file, int* layers, int capacity, int* count) {
  return guarded([&] {
    require(count != nullptr, Status::kInvalidArgument, "count: null pointer");
    *count = 0;
    require(file != nullptr, Status::kInvalidArgument, "file: null pointer");
    require(capacity >= 0, Status::kInvalidArgument, fmt::format("capacity: {} is negative", capacity));
    require(capacity == 0 || layers != nullptr, Status::kInvalidArgument, "layers: null pointer with capacity > 0");
    const int n = static_cast<int>(file->layers.size());
    for (int i = 0; i < n && i < capacity; ++i) layers[i] = file->layers[static_cast<size_t>(i)].layer;
    *count = n;
  });
}

strata_moe_status strata_moe_gguf_layer_info(const strata_moe_gguf* file, int layer, strata_moe_gguf_layer* out) {
  return guarded([&] {
    require(out != nullptr, Status::kInvalidArgument, "out: null pointer");
    require(out->struct_size >= kGgufLayerFirstVersionBytes, Status::kInvalidArgument,
            fmt::format("out.struct_size: {} (set it to sizeof(strata_moe_gguf_layer) = {})", out->struct_size,
                        sizeof(strata_moe_gguf_layer)));
    require(file != nullptr, Status::kInvalidArgument, "file: null pointer");
    const strata::gguf::MoeLayerInfo* info = nullptr;
    std::string found;
    for (const auto& l : file->layers) {
      if (l.layer == layer) info = &l;
      found += (found.empty() ? "" : ", ") + std::to_string(l.layer);
    }
    require(info != nullptr, Status::kInvalidArgument,
            fmt::format("layer: {} is not an MoE layer of {} (MoE layers: [{}])", layer, file->file.path(), found));
    const size_t size = out->struct_size;
    strata_moe_gguf_layer result{};
    result.struct_size = size;
    result.layer = info->layer;
    result.desc.d = info->weights.d;
    result.desc.f = info->weights.f;
    result.desc.n_expert = info->weights.n_expert;
    result.desc.gate = desc_from(info->weights.gate);
    result.desc.up = desc_from(info->weights.up);
    result.desc.down = desc_from(info->weights.down);
    const strata::gguf::TensorInfo* router = info->router;
    if (router != nullptr && router->type == strata::GgmlType::F32 && router->ne.size() >= 2 &&
        router->ne[0] == info->weights.d && router->ne[1] == info->weights.n_expert)
      result.router = reinterpret_cast<const float*>(router->data);
    result.n_expert_used = static_cast<int>(info->n_expert_used);
    std::memcpy(out, &result, std::min(size, sizeof(result)));
  });
}

const char* strata_moe_version(void) {
  return strata::library_version();
}

const char* strata_moe_git_commit(void) {
  return strata::library_git_commit();
}

}  // extern "C"

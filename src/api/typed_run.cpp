// Typed runs: 16-bit and 64-bit arrays staged to f32/i32 around a backend's f32 run, in a
// workspace the caller sizes (or the backend's own staging buffer).
#include <fmt/format.h>

#include <cstring>
#include <limits>

#include "api/backend.hpp"
#include "common/error.hpp"

namespace strata {
namespace {

constexpr size_t kWorkspaceAlignBytes = 256;

size_t align_up(size_t bytes) {
  return (bytes + kWorkspaceAlignBytes - 1) / kWorkspaceAlignBytes * kWorkspaceAlignBytes;
}

// Offsets of the staging arrays inside a workspace (npos: the caller's array is used as it is).
struct StagingLayout {
  static constexpr size_t npos = std::numeric_limits<size_t>::max();
  size_t x = npos, ids = npos, weights = npos, y = npos;
  size_t staging_bytes = 0;  // all staging arrays, aligned
  size_t scratch_offset = 0;
};

const char* dtype_name(DType t) {
  switch (t) {
    case DType::kF32: return "f32";
    case DType::kF16: return "f16";
    case DType::kBF16: return "bf16";
    case DType::kI32: return "i32";
    case DType::kI64: return "i64";
  }
  return "unknown";
}

void require_float_dtype(DType t, const char* field) {
  require(t == DType::kF32 || t == DType::kF16 || t == DType::kBF16, Status::kInvalidArgument,
          fmt::format("{}: dtype {} ({}) is not f32, f16 or bf16", field, static_cast<int>(t), dtype_name(t)));
}

StagingLayout layout_of(const MoeLayerWeights& weights, const TypedRun& run) {
  require_float_dtype(run.x_dtype, "x_dtype");
  require_float_dtype(run.weights_dtype, "weights_dtype");
  require_float_dtype(run.y_dtype, "y_dtype");
  require(run.ids_dtype == DType::kI32 || run.ids_dtype == DType::kI64, Status::kInvalidArgument,
          fmt::format("ids_dtype: dtype {} ({}) is not i32 or i64", static_cast<int>(run.ids_dtype),
                      dtype_name(run.ids_dtype)));
  require(run.n_tokens >= 0 && run.n_tokens <= (int64_t{1} << 31), Status::kInvalidArgument,
          fmt::format("n_tokens: {} (must be in [0, 2^31])", run.n_tokens));
  require(run.k >= 1 && run.k <= weights.n_expert, Status::kInvalidArgument,
          fmt::format("k: {} (must be in [1, E = {}])", run.k, weights.n_expert));
  const auto T = static_cast<size_t>(run.n_tokens), k = static_cast<size_t>(run.k);
  const auto d = static_cast<size_t>(weights.d);
  StagingLayout out;
  size_t offset = 0;
  auto take = [&](size_t bytes) {
    const size_t at = offset;
    offset = align_up(offset + bytes);
    return at;
  };
  if (run.x_dtype != DType::kF32) out.x = take(T * d * sizeof(float));
  if (run.ids_dtype != DType::kI32) out.ids = take(T * k * sizeof(int32_t));
  if (run.weights_dtype != DType::kF32) out.weights = take(T * k * sizeof(float));
  if (run.y_dtype != DType::kF32) out.y = take(T * d * sizeof(float));
  out.staging_bytes = offset;
  out.scratch_offset = offset;
  return out;
}

template <class From, class To, class Fn>
void convert_loop(const void* src, void* dst, size_t count, Fn fn) {
  const auto* in = static_cast<const From*>(src);
  auto* out = static_cast<To*>(dst);
  for (size_t i = 0; i < count; ++i) out[i] = fn(in[i]);
}

}  // namespace

size_t LayerBackend::scratch_bytes(int64_t, int, const RunOptions&) const {
  return 0;
}

void LayerBackend::convert(const void* src, DType from, void* dst, DType to, size_t count, const RunOptions&) {
  if (from == DType::kF16 && to == DType::kF32)
    convert_loop<uint16_t, float>(src, dst, count, f16_to_f32);
  else if (from == DType::kBF16 && to == DType::kF32)
    convert_loop<uint16_t, float>(src, dst, count, bf16_to_f32);
  else if (from == DType::kF32 && to == DType::kF16)
    convert_loop<float, uint16_t>(src, dst, count, f32_to_f16);
  else if (from == DType::kF32 && to == DType::kBF16)
    convert_loop<float, uint16_t>(src, dst, count, f32_to_bf16);
  else if (from == DType::kI64 && to == DType::kI32)
    convert_loop<int64_t, int32_t>(src, dst, count, [](int64_t v) {
      return v >= 0 && v <= std::numeric_limits<int32_t>::max() ? static_cast<int32_t>(v) : -1;
    });
  else if (from == to)
    std::memcpy(dst, src, count * static_cast<size_t>(dtype_bytes(from)));
  else
    fail(Status::kInternal, fmt::format("convert: no conversion from {} to {}", dtype_name(from), dtype_name(to)));
}

void* LayerBackend::staging(size_t bytes) {
  if (host_staging_.size() < bytes + kWorkspaceAlignBytes) host_staging_.resize(bytes + kWorkspaceAlignBytes);
  const auto base = reinterpret_cast<uintptr_t>(host_staging_.data());
  return reinterpret_cast<void*>(align_up(base));
}

size_t typed_workspace_bytes(const LayerBackend& backend, const MoeLayerWeights& weights, const TypedRun& run,
                             const RunOptions& options) {
  const StagingLayout layout = layout_of(weights, run);
  return layout.scratch_offset + backend.scratch_bytes(run.n_tokens, run.k, options);
}

RunReport run_typed(LayerBackend& backend, const MoeLayerWeights& weights, const TypedRun& run, RunOptions options) {
  const StagingLayout layout = layout_of(weights, run);
  std::unique_lock<std::mutex> staging_lock;
  uint8_t* base = nullptr;
  if (run.workspace != nullptr) {
    const size_t needed = layout.scratch_offset + backend.scratch_bytes(run.n_tokens, run.k, options);
    require(run.workspace_bytes >= needed, Status::kInvalidArgument,
            fmt::format("workspace_bytes: {} is smaller than the {} bytes this run needs "
                        "(strata_moe_workspace_bytes)",
                        run.workspace_bytes, needed));
    require(reinterpret_cast<uintptr_t>(run.workspace) % kWorkspaceAlignBytes == 0, Status::kInvalidArgument,
            fmt::format("workspace: not {}-byte aligned", kWorkspaceAlignBytes));
    base = static_cast<uint8_t*>(run.workspace);
    options.scratch = base + layout.scratch_offset;
    options.scratch_bytes = run.workspace_bytes - layout.scratch_offset;
  } else {
    require(run.workspace_bytes == 0, Status::kInvalidArgument,
            fmt::format("workspace: null with workspace_bytes = {}", run.workspace_bytes));
    options.scratch = nullptr;
    options.scratch_bytes = 0;
    if (layout.staging_bytes > 0) {
      staging_lock = std::unique_lock<std::mutex>(backend.staging_mutex);
      base = static_cast<uint8_t*>(backend.staging(layout.staging_bytes));
    }
  }
  const auto T = static_cast<size_t>(run.n_tokens), k = static_cast<size_t>(run.k);
  const auto d = static_cast<size_t>(weights.d);
  auto stage = [&](const void* src, DType from, size_t offset, DType to, size_t count) -> const void* {
    if (offset == StagingLayout::npos) return src;
    void* dst = base + offset;
    if (count > 0) backend.convert(src, from, dst, to, count, options);
    return dst;
  };
  const auto* x = static_cast<const float*>(stage(run.x, run.x_dtype, layout.x, DType::kF32, T * d));
  const auto* ids = static_cast<const int32_t*>(stage(run.ids, run.ids_dtype, layout.ids, DType::kI32, T * k));
  const auto* w = static_cast<const float*>(stage(run.weights, run.weights_dtype, layout.weights, DType::kF32, T * k));
  float* y = layout.y == StagingLayout::npos ? static_cast<float*>(run.y) : reinterpret_cast<float*>(base + layout.y);
  const RunReport ran = backend.run(LayerInputs{x, ids, w, run.n_tokens, run.k}, options, y);
  if (layout.y != StagingLayout::npos && T * d > 0) backend.convert(y, DType::kF32, run.y, run.y_dtype, T * d, options);
  return ran;
}

}  // namespace strata

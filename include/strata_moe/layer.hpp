// C++ wrapper over the C API (include/strata_moe.h): an RAII layer handle; failures throw
// strata_moe::Error carrying the status and the library's message.
#pragma once
#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

#include "strata_moe.h"

namespace strata_moe {

class Error : public std::runtime_error {
 public:
  Error(strata_moe_status status, const char* message)
      : std::runtime_error(message ? message : ""), status_(status) {}
  strata_moe_status status() const noexcept { return status_; }

 private:
  strata_moe_status status_;
};

inline void check(strata_moe_status status) {
  if (status != STRATA_MOE_OK) throw Error(status, strata_moe_last_error());
}

class Layer {
 public:
  Layer(strata_moe_backend backend, const strata_moe_layer_desc& desc) {
    check(strata_moe_layer_create(backend, &desc, &handle_));
  }
  Layer(const Layer&) = delete;
  Layer& operator=(const Layer&) = delete;
  Layer(Layer&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Layer& operator=(Layer&& other) noexcept {
    if (this != &other) {
      strata_moe_layer_destroy(handle_);
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  ~Layer() { strata_moe_layer_destroy(handle_); }

  // x: [T, d], ids/weights: [T, k], y: [T, d] (device pointers for the CUDA backend).
  void run(const float* x, const int32_t* ids, const float* weights, int64_t n_tokens, int k,
           float* y, const strata_moe_run_options* options = nullptr) {
    check(strata_moe_layer_run(handle_, x, ids, weights, n_tokens, k, y, options));
  }

  // Typed arrays and an optional workspace (strata_moe_run_args; see strata_moe.h).
  void run(const strata_moe_run_args& args) { check(strata_moe_layer_run_ex(handle_, &args)); }

  // Bytes of workspace a run of `args` needs (its dtypes, n_tokens, k).
  size_t workspace_bytes(const strata_moe_run_args& args) const {
    size_t bytes = 0;
    check(strata_moe_workspace_bytes(handle_, &args, &bytes));
    return bytes;
  }

  strata_moe_layer* get() const { return handle_; }

 private:
  strata_moe_layer* handle_ = nullptr;
};

inline void route(const float* router, const float* x, int64_t n_tokens, int64_t d,
                  int64_t n_expert, int k, strata_moe_gating gating, int32_t* ids, float* weights,
                  int threads = 0) {
  check(strata_moe_route(router, x, n_tokens, d, n_expert, k, gating, ids, weights, threads));
}

// Run options with every field at its default (struct_size set); change the fields you need.
inline strata_moe_run_options run_options() {
  strata_moe_run_options options;
  strata_moe_run_options_init(&options);
  return options;
}

// A run report with struct_size set: point run_options().report at it to learn what ran.
inline strata_moe_run_report run_report() {
  strata_moe_run_report report{};
  report.struct_size = sizeof(report);
  return report;
}

// "production", "fused", "fused-sm80", "fused-hopper", "fused-wmma" ("default" for DEFAULT).
inline const char* arm_name(strata_moe_arm arm) {
  const char* name = strata_moe_arm_name(arm);
  return name != nullptr ? name : "?";
}

// Run args with every field at its default (struct_size set, f32 arrays, i32 ids, no workspace).
inline strata_moe_run_args run_args() {
  strata_moe_run_args args;
  strata_moe_run_args_init(&args);
  return args;
}

inline int cuda_device_count() {
  return strata_moe_cuda_device_count();
}

}  // namespace strata_moe

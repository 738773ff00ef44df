// C++ wrapper over the C API's whole-block functions (include/strata_moe.h): an RAII block
// handle; failures throw strata_moe::Error.
#pragma once
#include <utility>

#include "strata_moe/layer.hpp"

namespace strata_moe {

class Block {
 public:
  Block(strata_moe_backend backend, const strata_moe_block_desc& desc) {
    check(strata_moe_block_create(backend, &desc, &handle_));
  }
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;
  Block(Block&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Block& operator=(Block&& other) noexcept {
    if (this != &other) {
      strata_moe_block_destroy(handle_);
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  ~Block() { strata_moe_block_destroy(handle_); }

  // x: [T, d], y: [T, d]; ids/weights [T, k] or null to route (host pointers on both backends).
  void run(const float* x, int64_t n_tokens, float* y, const int32_t* ids = nullptr,
           const float* weights = nullptr, int32_t* ids_out = nullptr, float* weights_out = nullptr,
           const strata_moe_run_options* options = nullptr) {
    check(
        strata_moe_block_run(handle_, x, n_tokens, ids, weights, y, ids_out, weights_out, options));
  }

  strata_moe_block* get() const { return handle_; }

 private:
  strata_moe_block* handle_ = nullptr;
};

}  // namespace strata_moe

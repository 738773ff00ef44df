// `strata-moe bench --backend cuda`: every weight set uploaded once, the activation pool and the
// routings on the device, and strata::cuda::run_layer timed per phase with its CUDA events.
#include "bench_runner.hpp"
#include "common/error.hpp"

#ifdef STRATA_MOE_HAVE_CUDA
#include <cstdlib>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include "bench/report.hpp"
#include "cuda/backend/run_layer.hpp"
#include "cuda/common/check.hpp"
#include "cuda/common/device_buffer.hpp"
#include "cuda/common/upload_tensor.hpp"
#include "cuda/fused_q10/q10_arm.hpp"
#endif

namespace strata::cli::benchrun {

#ifdef STRATA_MOE_HAVE_CUDA
namespace {

// One weight set on the device, each tensor `--weight-offset` bytes past its allocation's start.
struct DeviceLayer {
  cuda::DeviceBuffer<uint8_t> gate, up, down;
  MoeLayerWeights weights;  // data pointers are device addresses
};

template <class T>
cuda::DeviceBuffer<T> upload_vector(const std::vector<T>& host) {
  cuda::DeviceBuffer<T> d(host.size());
  STRATA_CUDA_CHECK(
      cudaMemcpy(d.get(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

class CudaSession;

class CudaRunner final : public bench::Runner {
 public:
  CudaRunner(CudaSession& session, const bench::CellSpec& cell);
  const std::vector<bench::Unit>& units() const override { return units_; }
  bench::UnitTime run(int slot, size_t unit) override;
  // Runs a unit and copies its output to the host ([tokens, d]).
  std::vector<float> run_to_host(int slot, size_t unit);

 private:
  CudaSession& session_;
  const bench::CellSpec& cell_;
  std::vector<bench::Unit> units_;
};

class CudaSession final : public Session {
 public:
  CudaSession(HostInputs& inputs, const SessionOptions& options)
      : inputs_(inputs), options_(options) {
    require_cuda_device();
    cudaDeviceProp prop{};
    STRATA_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    device_ = fmt::format("{}, {} SMs, L2 {} MB", prop.name, prop.multiProcessorCount,
                          prop.l2CacheSize >> 20);
    device_name_ = prop.name;
    for (const MoeLayerWeights& host : inputs_.weight_sets) {
      // Each arm of the cell must run as named on this layer and device: a fallback would time
      // another arm under its name.
      for (const bench::ArmChoice& arm : inputs_.cell.arms) {
        const RunReport chosen = cuda::choose(host, arm.arm, arm.numerics);
        require(chosen.fallback.empty(), Status::kUnsupported,
                fmt::format("--backend cuda: arm {} does not run this cell: {}", arm.name, chosen.fallback));
      }
      DeviceLayer& d = layers_.emplace_back();
      const auto offset = static_cast<size_t>(inputs_.cell.weight_offset);
      d.weights = host;
      d.weights.gate.data = cuda::upload_tensor(host.gate, d.gate, offset);
      d.weights.up.data = cuda::upload_tensor(host.up, d.up, offset);
      d.weights.down.data = cuda::upload_tensor(host.down, d.down, offset);
    }
    inputs_.release_host_weights_after_upload();
    for (const synth::Routing& r : inputs_.routings) {
      ids_.push_back(upload_vector(r.ids));
      route_weights_.push_back(upload_vector(r.weights));
    }
    x_ = upload_vector(inputs_.x_pool);
    STRATA_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }
  ~CudaSession() override {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  std::string device() const override { return device_; }
  double ceiling_tops() const override { return bench::ceiling_tops_for(device_name_); }

  bench::RunResult run(const bench::CellSpec& cell) override {
    for (const bench::ArmChoice& arm : cell.arms)
      for (const DeviceLayer& layer : layers_) {
        if (arm.numerics == Numerics::kQ10)
          require(cuda::fused_q10::q10_fused_supports(layer.weights), Status::kUnsupported,
                  "--backend cuda, arm " + arm.name + ": " +
                      cuda::fused_q10::q10_fused_refusal(layer.weights));
        else
          require(cuda::production_supports(layer.weights), Status::kUnsupported,
                  fmt::format("--backend cuda, arm {}: the CUDA q8 arms carry iq3_s and q2_0; "
                              "this cell has gate {} / up {} / down {} (--numerics q10 carries it)",
                              arm.name, ggml_type_name(layer.weights.gate.type),
                              ggml_type_name(layer.weights.up.type),
                              ggml_type_name(layer.weights.down.type)));
      }
    y_.reserve(static_cast<size_t>(cell.chunk * cell.d));
    CudaRunner runner(*this, cell);
    const bench::Unit& first = runner.units().front();
    const std::vector<float> y_a = runner.run_to_host(0, 0);
    const std::vector<float> y_b = runner.run_to_host(1, 0);
    const bench::AgreementCheck check = bench::check_agreement(
        inputs_.layer_weights(first.layer), inputs_.unit_inputs(first, cell.chunk), y_a.data(),
        y_b.data(), bench::arms_claim_bitwise(cell.arms[0], cell.arms[1]),
        options_.oracle_tokens, options_.threads, cell.arms[0].numerics, cell.arms[1].numerics);
    return check_then_time(cell, runner.units(), runner, check, options_);
  }

 private:
  friend class CudaRunner;

  HostInputs& inputs_;
  SessionOptions options_;
  std::string device_, device_name_;
  std::vector<DeviceLayer> layers_;
  std::vector<cuda::DeviceBuffer<int32_t>> ids_;
  std::vector<cuda::DeviceBuffer<float>> route_weights_;
  cuda::DeviceBuffer<float> x_, y_;
  cuda::Workspace workspace_;
  cudaStream_t stream_ = nullptr;
};

CudaRunner::CudaRunner(CudaSession& session, const bench::CellSpec& cell)
    : session_(session), cell_(cell), units_(session.inputs_.units(cell.chunk)) {}

bench::UnitTime CudaRunner::run(int slot, size_t unit) {
  const bench::Unit& u = units_[unit];
  const HostInputs& in = session_.inputs_;
  const size_t layer_set = static_cast<size_t>(u.layer) % session_.layers_.size();
  const size_t routing_set = static_cast<size_t>(u.layer) % session_.ids_.size();
  const int64_t first = u.chunk * cell_.chunk;
  cuda::DeviceInputs d;
  d.x = session_.x_.get() + in.x_row(u.layer, u.chunk, cell_.chunk, u.tokens) * cell_.d;
  d.ids = session_.ids_[routing_set].get() + first * cell_.k;
  d.weights = session_.route_weights_[routing_set].get() + first * cell_.k;
  d.n_tokens = u.tokens;
  d.k = cell_.k;
  cuda::PhaseTimes times;
  const bench::ArmChoice& arm = cell_.arms[static_cast<size_t>(slot)];
  // NOTE: with `times` run_layer waits for its last event, so units never overlap on the device.
  const RunReport ran = cuda::run_layer(session_.layers_[layer_set].weights, d, arm.arm, session_.workspace_,
                                        session_.stream_, session_.y_.get(), &times, arm.numerics);
  require(ran.fallback.empty() && ran.numerics == arm.numerics, Status::kInternal,
          fmt::format("bench: arm {} ran as {} ({})", arm.name, arm_name(ran.arm), ran.fallback));
  bench::UnitTime t;
  t.total_us = times.total_us;
  t.phase_us = {times.quantize_us, times.group_us, times.gate_up_us,
                times.swiglu_us,   times.down_us,  times.combine_us};
  t.has_phases = arm.numerics == Numerics::kQ8;  // the q10 kernels report the total only
  return t;
}

std::vector<float> CudaRunner::run_to_host(int slot, size_t unit) {
  run(slot, unit);
  std::vector<float> y(static_cast<size_t>(units_[unit].tokens * cell_.d));
  STRATA_CUDA_CHECK(cudaMemcpyAsync(y.data(), session_.y_.get(), y.size() * sizeof(float),
                                    cudaMemcpyDeviceToHost, session_.stream_));
  STRATA_CUDA_CHECK(cudaStreamSynchronize(session_.stream_));
  return y;
}

}  // namespace

void require_cuda_device() {
  int count = 0;
  require(cudaGetDeviceCount(&count) == cudaSuccess && count > 0, Status::kUnsupported,
          "--backend cuda: no CUDA device is visible");
}

std::unique_ptr<Session> make_cuda_session(HostInputs& inputs, const SessionOptions& options) {
  return std::make_unique<CudaSession>(inputs, options);
}

#else

void require_cuda_device() {
  fail(Status::kUnsupported,
       "--backend cuda: strata-moe was built without CUDA (configure with -DSTRATA_MOE_CUDA=ON)");
}

std::unique_ptr<Session> make_cuda_session(HostInputs&, const SessionOptions&) {
  require_cuda_device();
  return nullptr;
}

#endif

}  // namespace strata::cli::benchrun

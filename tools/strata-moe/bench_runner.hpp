// The backend side of `strata-moe bench`: host inputs shared by every backend (weight sets,
// routings, an activation pool, the unit list) and one session per backend that checks the arms
// and times them with bench::run_protocol.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/protocol.hpp"
#include "gguf/gguf.hpp"
#include "synth/synth.hpp"

namespace strata::cli::benchrun {

// Inputs for every chunk size of one bench invocation, in host memory.
struct HostInputs {
  bench::CellSpec cell;  // chunk is the largest of the run's chunk sizes
  std::optional<gguf::File> file;
  std::vector<synth::SyntheticLayer> synth_sets;  // random weights: one per weight set
  std::vector<MoeLayerWeights> weight_sets;       // host views; layer l runs weight_sets[l % size]
  std::vector<synth::Routing> routings;  // [tokens, k] each; layer l uses routings[l % size]
  std::vector<float> x_pool;             // [pool_rows, d]
  int64_t pool_rows = 0;

  const MoeLayerWeights& layer_weights(int layer) const {
    return weight_sets[static_cast<size_t>(layer) % weight_sets.size()];
  }
  const synth::Routing& routing_of(int layer) const {
    return routings[static_cast<size_t>(layer) % routings.size()];
  }
  // First pool row of the activations unit (layer, chunk) reads: consecutive units read different
  // windows of the pool where it holds more than one.
  int64_t x_row(int layer, int64_t chunk_index, int64_t chunk, int64_t tokens) const;
  // The units of one cell at chunk size `chunk`, chunk-major, with ops and touched weight bytes.
  std::vector<bench::Unit> units(int64_t chunk) const;
  // Host LayerInputs of a unit (pointers into x_pool and the routing).
  LayerInputs unit_inputs(const bench::Unit& unit, int64_t chunk) const;
  // Drops the host copies of weight sets the oracle never reads (set 0 stays).
  void release_host_weights_after_upload();
};

// Builds weights (random from the seed, or the GGUF file's first `layers` MoE layers), routings
// and activations. max_chunk: the largest chunk size to be run.
HostInputs make_host_inputs(const bench::CellSpec& cell, const std::string& gguf_path,
                            int64_t max_chunk);

struct SessionOptions {
  int threads = 0;  // CPU threads (0: OpenMP default); also the oracle's
  int64_t oracle_tokens = 16;
  int warmup_units = 4;
  bool progress = true;
};

class Session {
 public:
  virtual ~Session() = default;
  virtual std::string device() const = 0;
  virtual double ceiling_tops() const = 0;
  // The agreement check on the first unit, then (if it passed) the protocol at chunk size
  // cell.chunk.
  virtual bench::RunResult run(const bench::CellSpec& cell) = 0;
};

std::unique_ptr<Session> make_cpu_session(HostInputs& inputs, const SessionOptions& options);
// Throws Error(kUnsupported) in a build without the CUDA backend or on a machine without a GPU
// (checked before the inputs are built: they take a while at the GPU cells' sizes).
void require_cuda_device();
std::unique_ptr<Session> make_cuda_session(HostInputs& inputs, const SessionOptions& options);

// Shared by the sessions: check on unit 0, then the timed protocol (skipped when the check fails).
bench::RunResult check_then_time(const bench::CellSpec& cell, const std::vector<bench::Unit>& units,
                                 bench::Runner& runner, const bench::AgreementCheck& check,
                                 const SessionOptions& options);

}  // namespace strata::cli::benchrun

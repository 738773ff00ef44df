// Host inputs of `strata-moe bench` and the check-then-time sequence every backend shares.
#include <fmt/format.h>

#include <algorithm>

#include "bench/report.hpp"
#include "bench_runner.hpp"
#include "common/error.hpp"
#include "pipeline/finite.hpp"

namespace strata::cli::benchrun {
namespace {

// Routings are cheap per token but not free at 131072 tokens x 48 layers: a few distinct ones
// already keep each chunk's expert mix from repeating across consecutive layers.
constexpr int kMaxRoutingSets = 4;
// The activation pool holds this many chunks, so consecutive units read different rows.
constexpr int64_t kPoolChunks = 2;

double expert_bytes(const MoeLayerWeights& w) {
  const auto rows = [](const ExpertTensor& t) {
    return static_cast<double>(t.out_features) * t.row_bytes;
  };
  return rows(w.gate) + rows(w.up) + rows(w.down);
}

}  // namespace

int64_t HostInputs::x_row(int layer, int64_t chunk_index, int64_t chunk, int64_t tokens) const {
  const int64_t windows = std::max<int64_t>(1, pool_rows / chunk);
  const int64_t window = (chunk_index * cell.layers + layer) % windows;
  return std::min(window * chunk, pool_rows - tokens);
}

std::vector<bench::Unit> HostInputs::units(int64_t chunk) const {
  std::vector<bench::Unit> out;
  const int64_t n_chunks = (cell.tokens + chunk - 1) / chunk;
  std::vector<char> touched(static_cast<size_t>(cell.n_expert));
  for (int64_t c = 0; c < n_chunks; ++c) {
    for (int l = 0; l < cell.layers; ++l) {
      bench::Unit u;
      u.layer = l;
      u.chunk = c;
      u.tokens = std::min(chunk, cell.tokens - c * chunk);
      u.ops = bench::layer_ops(u.tokens, cell.k, cell.d, cell.f);
      const synth::Routing& r = routing_of(l);
      std::fill(touched.begin(), touched.end(), 0);
      const int32_t* ids = r.ids.data() + c * chunk * cell.k;
      for (int64_t i = 0; i < u.tokens * cell.k; ++i) touched[static_cast<size_t>(ids[i])] = 1;
      const auto n_touched = static_cast<double>(std::count(touched.begin(), touched.end(), 1));
      u.weight_bytes = n_touched * expert_bytes(layer_weights(l));
      out.push_back(u);
    }
  }
  return out;
}

LayerInputs HostInputs::unit_inputs(const bench::Unit& unit, int64_t chunk) const {
  const synth::Routing& r = routing_of(unit.layer);
  const int64_t first = unit.chunk * chunk;
  LayerInputs in;
  in.x = x_pool.data() + x_row(unit.layer, unit.chunk, chunk, unit.tokens) * cell.d;
  in.ids = r.ids.data() + first * cell.k;
  in.weights = r.weights.data() + first * cell.k;
  in.n_tokens = unit.tokens;
  in.k = cell.k;
  return in;
}

void HostInputs::release_host_weights_after_upload() {
  for (size_t s = 1; s < synth_sets.size(); ++s) synth_sets[s] = synth::SyntheticLayer();
}

HostInputs make_host_inputs(const bench::CellSpec& cell_in, const std::string& gguf_path,
                            int64_t max_chunk) {
  HostInputs in;
  in.cell = cell_in;
  bench::CellSpec& cell = in.cell;
  if (!gguf_path.empty()) {
    in.file.emplace(gguf::File::open(gguf_path, "--gguf"));
    const std::vector<gguf::MoeLayerInfo> found = gguf::discover_moe_layers(*in.file);
    require(!found.empty(), Status::kInvalidArgument,
            fmt::format("--gguf: {} has no MoE layers of stacked ffn_{{gate,up,down}}_exps tensors "
                        "(bench reads those; per-expert tensors run with `run`)",
                        gguf_path));
    require(
        cell.layers <= static_cast<int>(found.size()), Status::kInvalidArgument,
        fmt::format("--layers: {} but {} has {} MoE layers", cell.layers, gguf_path, found.size()));
    if (cell.layers <= 0) cell.layers = static_cast<int>(found.size());
    const MoeLayerWeights& w0 = found.front().weights;
    cell.d = w0.d;
    cell.f = w0.f;
    cell.n_expert = w0.n_expert;
    if (cell.k <= 0) cell.k = static_cast<int>(found.front().n_expert_used);
    require(cell.k >= 1 && cell.k <= cell.n_expert, Status::kInvalidArgument,
            fmt::format("--k: {} (the file gives no usable expert_used_count; pass --k in [1, {}])",
                        cell.k, cell.n_expert));
    cell.gate_up_type = w0.gate.type;
    cell.down_type = w0.down.type;
    cell.source = gguf_path;
    for (int l = 0; l < cell.layers; ++l) {
      const MoeLayerWeights& w = found[static_cast<size_t>(l)].weights;
      require(w.d == cell.d && w.f == cell.f && w.n_expert == cell.n_expert, Status::kUnsupported,
              fmt::format("--gguf: MoE layer {} has another geometry than the first; bench one "
                          "geometry at a time",
                          found[static_cast<size_t>(l)].layer));
      try {
        require_finite_scales(w);
      } catch (const Error& e) {
        fail(Status::kBadFile, fmt::format("{}: {}", gguf_path, e.what()));
      }
      in.weight_sets.push_back(w);
    }
    cell.weight_sets = cell.layers;
  } else {
    for (int s = 0; s < cell.weight_sets; ++s) {
      synth::LayerSpec spec;
      spec.d = cell.d;
      spec.f = cell.f;
      spec.n_expert = cell.n_expert;
      spec.gate_type = spec.up_type = cell.gate_up_type;
      spec.down_type = cell.down_type;
      spec.seed = cell.seed * 1000 + static_cast<uint64_t>(s) + 1;
      in.synth_sets.push_back(synth::make_layer(spec));
    }
    for (const auto& s : in.synth_sets) in.weight_sets.push_back(s.weights);
  }
  bench::check_geometry(cell.geometry_label(), cell.d, cell.f, cell.gate_up_type, cell.down_type);

  const int routing_sets = std::min(cell.layers, kMaxRoutingSets);
  for (int s = 0; s < routing_sets; ++s) {
    const uint64_t seed = cell.seed * 7919 + static_cast<uint64_t>(s) + 17;
    in.routings.push_back(cell.routing == bench::RoutingKind::kUniform
                              ? synth::uniform_routing(cell.tokens, cell.n_expert, cell.k, seed)
                              : synth::skewed_routing(cell.tokens, cell.n_expert, cell.k, seed));
  }
  in.pool_rows = std::min(cell.tokens, kPoolChunks * max_chunk);
  in.x_pool = synth::random_activations(in.pool_rows, cell.d, cell.seed * 104729 + 3);
  return in;
}

bench::RunResult check_then_time(const bench::CellSpec& cell, const std::vector<bench::Unit>& units,
                                 bench::Runner& runner, const bench::AgreementCheck& check,
                                 const SessionOptions& options) {
  bench::Measurements m;
  if (check.passed) {
    bench::ProtocolOptions protocol;
    protocol.cells = cell.cells;
    protocol.warmup_units = options.warmup_units;
    bench::Progress bar(fmt::format("bench T={}", cell.chunk));
    m = bench::run_protocol(runner, protocol, [&](int64_t done, int64_t total) {
      if (options.progress) bar.update(done, total);
    });
    bar.finish();
  }
  return bench::analyse(cell, units, m, check);
}

}  // namespace strata::cli::benchrun

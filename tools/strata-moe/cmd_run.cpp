// strata-moe run: one MoE layer of a GGUF file on activations from .npy files.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "api/backend.hpp"
#include "commands.hpp"
#include "common/error.hpp"
#include "common/text.hpp"
#include "common/limits.hpp"
#include "gguf/gguf.hpp"
#include "io/files.hpp"
#include "io/npy.hpp"
#include "pipeline/finite.hpp"
#include "pipeline/routing.hpp"

namespace strata::cli {
namespace {

struct RunArgs {
  std::string gguf, x, ids, weights, ids_out, weights_out, out, backend = "cpu", arm, numerics;
  int layer = -1;
  int threads = 0;
};

std::string shape_str(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

// A 2-D array of `dtype` with the expected shape (-1: any), or an error naming `what`.
void check_array(const npy::Array& a, const char* what, npy::DType dtype, int64_t rows,
                 int64_t cols) {
  require(
      a.dtype == dtype, Status::kInvalidArgument,
      fmt::format("{}: dtype must be {}", what, dtype == npy::DType::F32 ? "float32" : "int32"));
  require(
      a.shape.size() == 2 && (rows < 0 || a.shape[0] == rows) && (cols < 0 || a.shape[1] == cols),
      Status::kInvalidArgument,
      fmt::format("{}: shape {} does not match the layer, expected [{}, {}]", what,
                  shape_str(a.shape), rows < 0 ? std::string("T") : std::to_string(rows),
                  cols < 0 ? std::string("k") : std::to_string(cols)));
}

int run(const RunArgs& args) {
  // Outputs are checked (and their temporary files made) before any input is read, and renamed
  // into place together once the whole run has succeeded.
  io::OutputSet outputs({{"--gguf", args.gguf},
                         {"--x", args.x},
                         {"--ids", args.ids},
                         {"--weights", args.weights}});
  io::Output& out = outputs.add("--out", args.out);
  io::Output* ids_out = args.ids_out.empty() ? nullptr : &outputs.add("--ids-out", args.ids_out);
  io::Output* weights_out =
      args.weights_out.empty() ? nullptr : &outputs.add("--weights-out", args.weights_out);

  const gguf::File file = gguf::File::open(args.gguf, "--gguf");
  const std::vector<gguf::MoeLayerInfo> layers = gguf::discover_moe_layers(file);
  const gguf::MoeLayerInfo* layer = nullptr;
  for (const auto& l : layers)
    if (l.layer == args.layer) layer = &l;
  if (layer == nullptr) {
    std::vector<int> found;
    for (const auto& l : layers) found.push_back(l.layer);
    fail(Status::kInvalidArgument,
         fmt::format("--layer: {} is not an MoE layer of {} (MoE layers: [{}])", args.layer,
                     args.gguf, fmt::join(found, ", ")));
  }
  const MoeLayerWeights& w = layer->weights;
  try {
    require_finite_scales(w, args.threads);
  } catch (const Error& e) {
    // The weights come from the file: a non-finite scale is damage in it.
    fail(Status::kBadFile, fmt::format("{}: {}", args.gguf, e.what()));
  }

  const npy::Array x = npy::read(args.x, "--x");
  check_array(x, "--x", npy::DType::F32, -1, w.d);
  const int64_t n_tokens = x.shape[0];
  require(n_tokens >= 1, Status::kInvalidArgument, "--x: no tokens");
  for (int64_t i = 0; i < x.size(); ++i)
    if (!std::isfinite(x.f32()[i]))
      fail(Status::kInvalidArgument,
           fmt::format("--x: element [{}, {}] is not finite", i / w.d, i % w.d));

  // Routing: from the caller, or from the layer's router.
  require(args.ids.empty() == args.weights.empty(), Status::kInvalidArgument,
          "--ids and --weights must be given together (or neither, to route with the router)");
  std::vector<int32_t> ids;
  std::vector<float> weights;
  int k = 0;
  if (!args.ids.empty()) {
    const npy::Array ids_in = npy::read(args.ids, "--ids");
    check_array(ids_in, "--ids", npy::DType::I32, n_tokens, -1);
    k = static_cast<int>(ids_in.shape[1]);
    require(k >= 1 && k <= w.n_expert && k <= 64, Status::kInvalidArgument,
            fmt::format("--ids: k = {} must be in [1, min(E = {}, 64)]", k, w.n_expert));
    const npy::Array weights_in = npy::read(args.weights, "--weights");
    check_array(weights_in, "--weights", npy::DType::F32, n_tokens, k);
    ids.assign(ids_in.i32(), ids_in.i32() + ids_in.size());
    weights.assign(weights_in.f32(), weights_in.f32() + weights_in.size());
    validate_routing(ids.data(), weights.data(), n_tokens, k, w.n_expert, "--ids", "--weights");
  } else {
    require(layer->router != nullptr, Status::kInvalidArgument,
            fmt::format("--ids: layer {} has no router tensor, so --ids and --weights are required",
                        args.layer));
    const gguf::TensorInfo& router = *layer->router;
    require(
        router.type == GgmlType::F32 && router.ne.size() >= 2 && router.ne[0] == w.d &&
            router.ne[1] == w.n_expert,
        Status::kUnsupported,
        fmt::format("tensor '{}': the router must be F32 [{}, {}]", router.name, w.d, w.n_expert));
    require_finite_matrix(fmt::format("{}: router tensor '{}'", args.gguf, router.name),
                          reinterpret_cast<const float*>(router.data), w.n_expert, w.d,
                          Status::kBadFile);
    k = static_cast<int>(layer->n_expert_used);
    require(k >= 1 && k <= w.n_expert && k <= 64, Status::kInvalidArgument,
            fmt::format("--gguf: expert_used_count {} is not usable; pass --ids and --weights",
                        layer->n_expert_used));
    ids.resize(static_cast<size_t>(n_tokens * k));
    weights.resize(ids.size());
    route_tokens(reinterpret_cast<const float*>(router.data), x.f32(), n_tokens, w.d, w.n_expert, k,
                 Gating::kSoftmaxTopKRenorm, ids.data(), weights.data(), args.threads);
  }

  Arm arm = arm_from_env();
  if (args.arm == "production") arm = Arm::kProduction;
  if (args.arm == "fused") arm = Arm::kFused;
  std::unique_ptr<LayerBackend> backend = make_host_memory_backend(args.backend, w);
  std::vector<float> y(static_cast<size_t>(n_tokens * w.d));
  RunOptions options;
  options.threads = args.threads;
  options.numerics = args.numerics.empty() ? numerics_from_env() : *parse_numerics(args.numerics);
  backend->run(LayerInputs{x.f32(), ids.data(), weights.data(), n_tokens, k}, arm, options,
               y.data());

  npy::write(out, npy::DType::F32, {n_tokens, w.d}, y.data());
  if (ids_out != nullptr) npy::write(*ids_out, npy::DType::I32, {n_tokens, k}, ids.data());
  if (weights_out != nullptr)
    npy::write(*weights_out, npy::DType::F32, {n_tokens, k}, weights.data());
  outputs.commit();
  std::fprintf(stderr, "layer %d: %lld tokens, k=%d, %s arm, %s numerics on %s -> %s\n",
               args.layer, static_cast<long long>(n_tokens), k,
               arm == Arm::kFused ? "fused" : "production", numerics_name(options.numerics),
               backend->name(), printable(args.out).c_str());
  return 0;
}

}  // namespace

Runner add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd =
      app.add_subcommand("run", "Run one MoE layer of a GGUF file on x from a .npy file");
  cmd->add_option("--gguf", args->gguf, "model file")->required();
  cmd->add_option("--layer", args->layer, "layer index (blk.N)")->required();
  cmd->add_option("--x", args->x, "activations, f32 [T, d] .npy")->required();
  cmd->add_option("--ids", args->ids, "expert ids, int32 [T, k] .npy (else the router routes)");
  cmd->add_option("--weights", args->weights, "expert weights, f32 [T, k] .npy");
  cmd->add_option("--ids-out", args->ids_out, "write the ids used, int32 [T, k] .npy");
  cmd->add_option("--weights-out", args->weights_out, "write the weights used, f32 [T, k] .npy");
  cmd->add_option("--out", args->out, "output y, f32 [T, d] .npy")->required();
  cmd->add_option("--backend", args->backend, "cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_option("--arm", args->arm, "production or fused (overrides STRATA_PF_FUSED)")
      ->check(CLI::IsMember({"production", "fused"}));
  cmd->add_option("--threads", args->threads, "CPU threads (0: OpenMP default; at most 1024)")
      ->check(integer_in(0, limits::kMaxThreads));
  cmd->add_option("--numerics", args->numerics, "q8 or q10 (overrides STRATA_NUMERICS; default q8)")
      ->check(CLI::IsMember({"q8", "q10"}));
  return [args] { return run(*args); };
}

}  // namespace strata::cli

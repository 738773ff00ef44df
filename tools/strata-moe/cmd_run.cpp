// strata-moe run: the MoE block of one layer of a GGUF file on activations from .npy files,
// built from the file's architecture and keys (gguf/block_plan.hpp), or refused by name.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "api/backend.hpp"
#include "block/block.hpp"
#include "commands.hpp"
#include "common/error.hpp"
#include "common/limits.hpp"
#include "common/text.hpp"
#include "gguf/block_plan.hpp"
#include "io/files.hpp"
#include "io/npy.hpp"
#include "pipeline/finite.hpp"
#include "pipeline/routing.hpp"

namespace strata::cli {
namespace {

struct RunArgs {
  std::string gguf, x, ids, weights, ids_out, weights_out, out, backend = "cpu", arm, gating,
      numerics;
  int layer = -1;
  int threads = 0;
  int k = 0;
};

std::string shape_str(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

// A 2-D array of `dtype` with the expected shape (-1: any) and at most kMaxTokens rows, or an
// error naming `what`; checked on the header, before the data is read.
npy::Array read_array(const std::string& path, const char* what, npy::DType dtype, int64_t rows,
                      int64_t cols) {
  return npy::read(path, what, [&](npy::DType got, const std::vector<int64_t>& shape) {
    require(got == dtype, Status::kInvalidArgument,
            fmt::format("{}: dtype must be {}", what,
                        dtype == npy::DType::F32 ? "float32" : "int32"));
    require(shape.size() == 2 && (rows < 0 || shape[0] == rows) && (cols < 0 || shape[1] == cols),
            Status::kInvalidArgument,
            fmt::format("{}: shape {} does not match the layer, expected [{}, {}]", what,
                        shape_str(shape), rows < 0 ? std::string("T") : std::to_string(rows),
                        cols < 0 ? std::string("k") : std::to_string(cols)));
    require(cols >= 0 || (shape[1] >= 1 && shape[1] <= limits::kMaxExpertsPerToken),
            Status::kInvalidArgument,
            fmt::format("{}: k = {} must be in [1, {}]", what, shape[1],
                        limits::kMaxExpertsPerToken));
    require(shape[0] <= limits::kMaxTokens, Status::kInvalidArgument,
            fmt::format("{}: {} tokens is more than the limit {}", what, shape[0],
                        limits::kMaxTokens));
    limits::checked_product(fmt::format("{}: T x columns", what), shape[0], shape[1],
                            limits::kMaxActivationValues);
  });
}

gguf::BlockOverrides overrides_from(const RunArgs& args) {
  gguf::BlockOverrides over;
  over.k = args.k;
  if (args.gating == "softmax") over.score = ScoreFunc::kSoftmax;
  if (args.gating == "sigmoid") over.score = ScoreFunc::kSigmoid;
  if (args.gating == "softmax-selected") over.score = ScoreFunc::kSoftmaxSelected;
  return over;
}

// Every value the block reads from the file is finite, or the file is damaged: NaN or Inf in a
// block scale, the router, a bias or a shared-expert gate is refused naming the tensor.
void require_finite_block(const std::string& file, int layer, const MoeBlock& block, int threads) {
  try {
    require_finite_scales(block.routed, threads);
    for (const SharedExpert& s : block.shared) require_finite_scales(s.ffn, threads);
  } catch (const Error& e) {
    fail(Status::kBadFile, fmt::format("{}: {}", file, e.what()));
  }
  const MoeLayerWeights& w = block.routed;
  const auto check = [&](const char* role, const char* tensor, const float* values, int64_t rows,
                         int64_t cols) {
    if (values != nullptr)
      require_finite_matrix(fmt::format("{}: {} tensor 'blk.{}.{}'", file, role, layer, tensor),
                            values, rows, cols, Status::kBadFile);
  };
  check("router", "ffn_gate_inp.weight", block.router, w.n_expert, w.d);
  check("router bias", "ffn_gate_inp.bias", block.routing.logit_bias, 1, w.n_expert);
  check("selection bias", "exp_probs_b.bias", block.routing.selection_bias, 1, w.n_expert);
  check("gate bias", "ffn_gate_exps.bias", w.gate_bias, w.n_expert, w.f);
  check("up bias", "ffn_up_exps.bias", w.up_bias, w.n_expert, w.f);
  check("down bias", "ffn_down_exps.bias", w.down_bias, w.n_expert, w.d);
  for (const SharedExpert& s : block.shared)
    check("shared-expert gate", "ffn_gate_inp_shexp.weight", s.gate, 1, w.d);
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

  const gguf::Model model = gguf::Model::open(args.gguf);
  const auto built = gguf::build_block(model, args.layer, overrides_from(args));
  const MoeBlock& block = built->block;
  const MoeLayerWeights& w = block.routed;
  require_finite_block(args.gguf, args.layer, block, args.threads);

  const npy::Array x = read_array(args.x, "--x", npy::DType::F32, -1, w.d);
  const int64_t n_tokens = x.shape[0];
  require(n_tokens >= 1, Status::kInvalidArgument, "--x: no tokens");
  for (int64_t i = 0; i < x.size(); ++i)
    if (!std::isfinite(x.f32()[i]))
      fail(Status::kInvalidArgument,
           fmt::format("--x: element [{}, {}] is not finite", i / w.d, i % w.d));

  // Routing: from the caller, or from the block's router.
  require(args.ids.empty() == args.weights.empty(), Status::kInvalidArgument,
          "--ids and --weights must be given together (or neither, to route with the router)");
  std::vector<int32_t> ids;
  std::vector<float> weights;
  int k = block.k;
  if (!args.ids.empty()) {
    require(
        args.k == 0 && args.gating.empty(), Status::kInvalidArgument,
        "--k/--gating: they change the router's choice, so they cannot go with --ids/--weights");
    const npy::Array ids_in = read_array(args.ids, "--ids", npy::DType::I32, n_tokens, -1);
    k = static_cast<int>(ids_in.shape[1]);
    require(k >= 1 && k <= w.n_expert && k <= 64, Status::kInvalidArgument,
            fmt::format("--ids: k = {} must be in [1, min(E = {}, 64)]", k, w.n_expert));
    const npy::Array weights_in =
        read_array(args.weights, "--weights", npy::DType::F32, n_tokens, k);
    ids.assign(ids_in.i32(), ids_in.i32() + ids_in.size());
    weights.assign(weights_in.f32(), weights_in.f32() + weights_in.size());
    validate_routing(ids.data(), weights.data(), n_tokens, k, w.n_expert, "--ids", "--weights");
  } else {
    require(block.router != nullptr, Status::kInvalidArgument,
            fmt::format("--ids: layer {} has no router tensor, so --ids and --weights are required",
                        args.layer));
  }

  // The flags name the arm and profile; the environment is the default of what they leave unset.
  RunOptions options;
  options.threads = args.threads;
  const EnvDefaults env = defaults_from_env();
  options.arm = args.arm.empty() ? env.arm : parse_arm(args.arm);
  options.numerics = args.numerics.empty() ? env.numerics : parse_numerics(args.numerics);
  BlockRunner runner(block, args.backend);
  std::vector<float> y(static_cast<size_t>(n_tokens * w.d));
  std::vector<int32_t> ids_used;
  std::vector<float> weights_used;
  const RunReport ran = runner.run(x.f32(), n_tokens, ids.empty() ? nullptr : ids.data(),
                                   weights.empty() ? nullptr : weights.data(), k, options, y.data(), &ids_used,
                                   &weights_used);

  npy::write(out, npy::DType::F32, {n_tokens, w.d}, y.data());
  if (ids_out != nullptr) npy::write(*ids_out, npy::DType::I32, {n_tokens, k}, ids_used.data());
  if (weights_out != nullptr)
    npy::write(*weights_out, npy::DType::F32, {n_tokens, k}, weights_used.data());
  outputs.commit();
  std::string extras;
  for (const std::string& e : built->plan.extras) extras += "; " + e;
  // The last line names the arm and profile that ran (and why a requested arm did not).
  const std::string fallback =
      ran.fallback.empty() ? "" : fmt::format(" (requested {}: {})", options.arm ? arm_name(*options.arm) : "default",
                                              printable(ran.fallback));
  std::fprintf(stderr, "layer %d (%s): %lld tokens, k=%d, %s%s; %s arm, %s numerics on %s%s -> %s\n",
               args.layer, printable(model.architecture()).c_str(),
               static_cast<long long>(n_tokens), k,
               args.ids.empty() ? built->plan.routing.c_str() : "ids and weights given",
               extras.c_str(), arm_name(ran.arm), numerics_name(ran.numerics), runner.backend_name(),
               fallback.c_str(), printable(args.out).c_str());
  return 0;
}

}  // namespace

Runner add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand(
      "run", "Run the MoE block of one layer of a GGUF file on x from a .npy file");
  cmd->add_option("--gguf", args->gguf, "model file (the first shard of a split GGUF)")->required();
  cmd->add_option("--layer", args->layer, "layer index (blk.N)")->required();
  cmd->add_option("--x", args->x, "activations, f32 [T, d] .npy")->required();
  cmd->add_option("--ids", args->ids, "expert ids, int32 [T, k] .npy (else the router routes)");
  cmd->add_option("--weights", args->weights, "expert weights, f32 [T, k] .npy");
  cmd->add_option("--ids-out", args->ids_out, "write the ids used, int32 [T, k] .npy");
  cmd->add_option("--weights-out", args->weights_out, "write the weights used, f32 [T, k] .npy");
  cmd->add_option("--out", args->out, "output y, f32 [T, d] .npy")->required();
  cmd->add_option("--backend", args->backend, "cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_option("--arm", args->arm,
                  "production, fused, fused-sm80, fused-hopper or fused-wmma (overrides STRATA_PF_FUSED; "
                  "default production, on CUDA under q10 fused)")
      ->check(CLI::IsMember({"production", "fused", "fused-sm80", "fused-hopper", "fused-wmma"}));
  cmd->add_option("--threads", args->threads, "CPU threads (0: OpenMP default; at most 1024)")
      ->check(integer_in(0, limits::kMaxThreads));
  cmd->add_option("--numerics", args->numerics,
                  "q8 or q10 (overrides STRATA_NUMERICS; default q10 where the backend has a q10 arm for "
                  "the layer, else q8)")
      ->check(CLI::IsMember({"q8", "q10"}));
  cmd->add_option("--k", args->k, "experiment: route to k experts instead of expert_used_count")
      ->check(integer_in(1, limits::kMaxExpertsPerToken));
  cmd->add_option("--gating", args->gating,
                  "experiment: the gating function instead of the architecture's")
      ->check(CLI::IsMember({"softmax", "sigmoid", "softmax-selected"}));
  return [args] { return run(*args); };
}

}  // namespace strata::cli

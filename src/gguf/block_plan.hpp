// The MoE block of each layer of a GGUF model, as llama.cpp's graph for the file's architecture
// computes it: which tensors and keys make it up, what it computes, what can run it -- and the
// runnable MoeBlock itself, or a refusal naming the architecture, tensor or key it does not
// compute. Nothing here guesses: a piece strata-moe does not compute is a refusal.
#pragma once
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "block/block.hpp"
#include "gguf/gguf.hpp"

namespace strata::gguf {

// Split GGUFs (gguf-split): split.no / split.count keys, shards named <prefix>-NNNNN-of-MMMMM.gguf.
struct SplitInfo {
  bool is_split = false;
  int index = 0;                              // split.no, 0-based
  int count = 1;                              // split.count
  std::vector<std::filesystem::path> shards;  // every shard's expected path, in order
  std::vector<bool> present;                  // whether each is beside the named file
};
SplitInfo split_info(const File& file);

// A model: the named file, or every shard of a split GGUF found beside it. Metadata comes from
// the first shard; tensors from all of them.
class Model {
 public:
  // `option` (e.g. "--gguf") names the named file in its errors.
  static Model open(const std::filesystem::path& path, std::string_view option = {});
  const File& named() const { return *files_[named_]; }
  const File& meta() const { return *files_[0]; }  // the first shard when present
  const std::vector<std::unique_ptr<File>>& files() const { return files_; }
  const SplitInfo& split() const { return split_; }
  const TensorInfo* find_tensor(std::string_view name) const;
  std::string architecture() const { return meta().architecture(); }

 private:
  std::vector<std::unique_ptr<File>> files_;
  size_t named_ = 0;
  SplitInfo split_;
  std::map<std::string, const TensorInfo*, std::less<>> tensors_;
};

enum class BlockKind { kMoe, kDense, kUnknown };

// What `info` shows for one layer with FFN tensors; never throws for a valid file.
struct BlockPlan {
  int layer = 0;
  BlockKind kind = BlockKind::kUnknown;
  int64_t d = 0, f = 0, n_expert = 0;
  int k = 0;
  std::string gate_type, up_type, down_type;  // lower-case ggml names
  bool merged_gate_up = false;
  bool per_expert_tensors = false;  // mixtral's blk.N.ffn_gate.E.weight
  uint64_t bytes = 0;               // expert tensor bytes
  std::string routing;              // describe_routing, when the routing is known
  std::vector<std::string> extras;  // shared experts, biases, activation
  std::string cpu;                  // "" when the CPU arms run it, else the reason
  std::string cuda;                 // "" when a CUDA arm runs it, else the reason
  // The arms of the registry (pipeline/arm_registry.hpp) that carry every expert layer of the
  // block, per backend and profile (arm names; the device is not asked: see ArmSpec::needs_sm90a).
  std::vector<std::string> cpu_q8, cpu_q10, cuda_q8, cuda_q10;
};

std::vector<BlockPlan> plan_blocks(const Model& model);

// Routing overrides for experiments (`run --k`, `--gating`).
struct BlockOverrides {
  int k = 0;                       // 0: {arch}.expert_used_count
  std::optional<ScoreFunc> score;  // replaces the architecture's gating function
};

// A runnable block with the buffers its views need (tensors copied only where the file's
// layout cannot be viewed: per-expert tensors at uneven offsets, f16/bf16 routers and biases).
struct GgufBlock {
  MoeBlock block;
  BlockPlan plan;
  std::vector<std::unique_ptr<std::vector<float>>> owned_f32;
  std::vector<std::unique_ptr<std::vector<uint8_t>>> owned_bytes;
};

// Throws Error: kInvalidArgument naming --layer for a layer without an MoE block, kUnsupported
// naming the architecture / tensor / key strata-moe does not compute, kBadFile for shapes and
// values the architecture cannot have.
std::unique_ptr<GgufBlock> build_block(const Model& model, int layer,
                                       const BlockOverrides& overrides = {});

// The architectures whose blocks are built, for messages and docs.
std::string supported_architectures();

}  // namespace strata::gguf

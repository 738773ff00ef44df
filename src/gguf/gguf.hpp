// Read-only GGUF (v2, v3) reader over a private mmap: metadata, tensor infos, tensor views.
// Every count, length and offset read from the file is checked against the file size (with
// overflow-safe arithmetic) before anything is allocated or read; a damaged file throws
// strata::Error(Status::kBadFile) with a message naming the key or tensor and the reason.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "formats/ggml_type.hpp"
#include "pipeline/layer.hpp"

namespace strata::gguf {

enum class ValueType : uint32_t {
  U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, BOOL = 7, STRING = 8, ARRAY = 9,
  U64 = 10, I64 = 11, F64 = 12,
};

// "u8", "string", "array", ...; "unknown" for a value outside the enum.
std::string_view value_type_name(ValueType type);

struct MetaValue;
struct MetaArray {
  ValueType element_type = ValueType::U8;
  std::vector<MetaValue> values;
};
struct MetaValue {
  ValueType type = ValueType::U8;
  std::variant<uint64_t, int64_t, double, bool, std::string, MetaArray> value;

  std::optional<int64_t> as_int() const;       // any integer type (and bool)
  std::optional<std::string> as_string() const;
};

struct TensorInfo {
  std::string name;
  GgmlType type = GgmlType::F32;
  std::vector<int64_t> ne;      // ne[0] fastest
  uint64_t offset = 0;          // from the start of the data section
  uint64_t bytes = 0;
  const uint8_t* data = nullptr;  // into the mapping
};

class File {
 public:
  // Throws Error(kIo | kBadFile). `option` ("--gguf") names the file in open errors; anything but
  // a regular file is refused before it is opened.
  static File open(const std::filesystem::path& path, std::string_view option = {});
  // Parses an in-memory image (no copy; `bytes` must outlive the File). Used by the fuzzer.
  static File parse(std::span<const uint8_t> bytes, std::string label);

  uint32_t version() const;
  uint64_t alignment() const;
  uint64_t data_offset() const;
  const std::vector<std::pair<std::string, MetaValue>>& metadata() const;
  const MetaValue* find(std::string_view key) const;
  const std::vector<TensorInfo>& tensors() const;
  const TensorInfo* find_tensor(std::string_view name) const;
  std::string architecture() const;  // general.architecture, or "" when absent
  const std::string& path() const;

  File(File&&) noexcept;
  File& operator=(File&&) noexcept;
  ~File();

 private:
  struct Impl;
  explicit File(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// One MoE layer of a model file, as views into the mapping.
struct MoeLayerInfo {
  int layer = 0;
  MoeLayerWeights weights;               // gate/up (possibly views of a merged gate_up), down
  bool merged_gate_up = false;
  const TensorInfo* router = nullptr;    // blk.N.ffn_gate_inp.weight, F32 [d, E] (null if absent)
  const TensorInfo* shared_gate = nullptr;   // *_shexp tensors when present
  const TensorInfo* shared_up = nullptr;
  const TensorInfo* shared_down = nullptr;
  const TensorInfo* shared_router = nullptr;
  int64_t n_expert_used = 0;             // {arch}.expert_used_count (0 when absent)
  uint64_t bytes = 0;                    // expert tensor bytes of the layer
};

// Every blk.N with expert tensors, in layer order. Throws kBadFile naming the tensor when a
// layer's tensors disagree with each other or with the hyperparameters.
std::vector<MoeLayerInfo> discover_moe_layers(const File& file);

}  // namespace strata::gguf

// Builds GGUF images in memory for tests: any version, any metadata (nested arrays included),
// tensors with chosen shapes, type ids and offsets, and the byte offsets of each part so damage
// tests can cut or patch a file at a known place.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "gguf/gguf.hpp"

namespace strata::test {

// Little-endian byte builder.
struct Bytes {
  std::vector<uint8_t> data;
  void u8(uint8_t v) { data.push_back(v); }
  void u16(uint16_t v);
  void u32(uint32_t v);
  void u64(uint64_t v);
  void str(const std::string& s);  // u64 length + bytes
  void append(const std::vector<uint8_t>& more) {
    data.insert(data.end(), more.begin(), more.end());
  }
};

// Encodes one metadata value (without the key or type), in GGUF's layout.
void encode_value(Bytes& out, const gguf::MetaValue& value);

// Metadata value constructors.
gguf::MetaValue meta_u32(uint32_t v);
gguf::MetaValue meta_u64(uint64_t v);
gguf::MetaValue meta_i32(int32_t v);
gguf::MetaValue meta_f32(float v);
gguf::MetaValue meta_f64(double v);
gguf::MetaValue meta_bool(bool v);
gguf::MetaValue meta_string(std::string v);
gguf::MetaValue meta_array(gguf::ValueType element_type, std::vector<gguf::MetaValue> values);

struct WriterTensor {
  std::string name;
  uint32_t type_id = 0;            // raw, so unknown ids can be written
  std::vector<uint64_t> ne;        // raw, so overflowing shapes can be written
  std::vector<uint8_t> data;       // empty: sized from the type and filled with a pattern
  std::optional<uint64_t> offset;  // override of the computed data offset
};

struct GgufImage {
  std::vector<uint8_t> bytes;
  size_t counts_offset = 0;              // the tensor count u64 (kv count follows)
  size_t kv_offset = 0;                  // first key/value
  std::vector<size_t> kv_offsets;        // start of each key/value
  size_t infos_offset = 0;               // first tensor info
  std::vector<size_t> info_offsets;      // start of each tensor info
  size_t data_offset = 0;                // data section
  std::vector<uint64_t> tensor_offsets;  // relative to data_offset
};

class GgufWriter {
 public:
  uint32_t version = 3;
  uint64_t alignment = 32;  // used for padding; add a general.alignment key to make it known
  std::optional<uint64_t> tensor_count_override;
  std::optional<uint64_t> kv_count_override;

  void kv(std::string key, gguf::MetaValue value) {
    kvs_.emplace_back(std::move(key), std::move(value));
  }
  // Replaces the value of `key` (added where it is not there yet).
  void set_kv(const std::string& key, gguf::MetaValue value) {
    for (auto& [k, v] : kvs_)
      if (k == key) {
        v = std::move(value);
        return;
      }
    kv(key, std::move(value));
  }
  // The tensor named `name`, or null.
  WriterTensor* find_tensor(const std::string& name) {
    for (WriterTensor& t : tensors_)
      if (t.name == name) return &t;
    return nullptr;
  }
  // A key/value with hand-encoded type and payload (for malformed values).
  void kv_raw(std::string key, uint32_t type, std::vector<uint8_t> payload);
  WriterTensor& tensor(std::string name, GgmlType type, std::vector<uint64_t> ne);
  WriterTensor& tensor_raw(WriterTensor t);

  GgufImage build() const;
  void write(const std::filesystem::path& path) const;

 private:
  struct RawKv {
    std::string key;
    uint32_t type;
    std::vector<uint8_t> payload;
  };
  std::vector<std::pair<std::string, gguf::MetaValue>> kvs_;
  std::vector<RawKv> raw_kvs_;  // written after kvs_
  std::vector<WriterTensor> tensors_;
};

// A qwen3moe-style file: `layers` MoE layers of IQ3_S gate/up and Q2_0 down with a router,
// hyperparameters set, optionally merged gate_up and shared-expert tensors.
struct MoeFileSpec {
  std::string arch = "qwen3moe";
  int layers = 2;
  int64_t d = 256;
  int64_t f = 128;
  int64_t n_expert = 4;
  int64_t n_expert_used = 2;
  bool merged_gate_up = false;
  int64_t shared_f = 0;  // > 0: add shared-expert tensors of this width
};
GgufWriter moe_writer(const MoeFileSpec& spec);

}  // namespace strata::test

// The bundled ggml decode vectors (tests/data/vectors/decode): manifest entries, raw blocks and
// ggml's to_float output, and a bitwise comparison that reports where values differ.
#pragma once
#include <cstdint>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace strata::test {

struct DecodeVectors {
  std::string name;      // manifest name, e.g. "q2_K"
  uint32_t type_id = 0;  // ggml type id
  int block_values = 0;
  int block_bytes = 0;
  int64_t n_blocks = 0;
  int64_t n_quantized = 0;      // the first n_quantized blocks are realistic, the rest fuzz
  std::vector<uint8_t> blocks;  // [n_blocks, block_bytes]
  std::vector<float> expected;  // [n_blocks, block_values] ggml to_float
};

inline std::filesystem::path decode_vectors_dir() {
  return data_dir() / "vectors" / "decode";
}

inline nlohmann::json decode_manifest() {
  std::ifstream in(decode_vectors_dir() / "manifest.json");
  if (!in) throw std::runtime_error("cannot open decode manifest");
  return nlohmann::json::parse(in);
}

// Every type named in the manifest, in manifest order.
inline std::vector<std::string> decode_vector_names() {
  std::vector<std::string> names;
  const nlohmann::json manifest = decode_manifest();  // NOTE: a temporary would dangle in the loop
  for (const auto& entry : manifest.at("types"))
    names.push_back(entry.at("name").get<std::string>());
  return names;
}

inline DecodeVectors load_decode_vectors(const std::string& name) {
  const nlohmann::json manifest = decode_manifest();
  for (const auto& entry : manifest.at("types")) {
    if (entry.at("name").get<std::string>() != name) continue;
    DecodeVectors v;
    v.name = name;
    v.type_id = entry.at("ggml_type_id").get<uint32_t>();
    v.block_values = entry.at("elements_per_block").get<int>();
    v.block_bytes = entry.at("bytes_per_block").get<int>();
    v.n_blocks = entry.at("n_blocks").get<int64_t>();
    v.n_quantized = entry.at("n_blocks_quantized").get<int64_t>();
    v.blocks = read_file_bytes(decode_vectors_dir() / entry.at("blocks_file").get<std::string>());
    const auto f32 =
        read_file_bytes(decode_vectors_dir() / entry.at("f32_file").get<std::string>());
    if (v.blocks.size() != static_cast<size_t>(v.n_blocks * v.block_bytes) ||
        f32.size() != static_cast<size_t>(v.n_blocks * v.block_values) * sizeof(float))
      throw std::runtime_error("decode vectors for " + name + " do not match the manifest sizes");
    v.expected.resize(f32.size() / sizeof(float));
    std::memcpy(v.expected.data(), f32.data(), f32.size());
    return v;
  }
  throw std::runtime_error("no decode vectors named " + name);
}

inline uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// Number of values whose bit patterns differ; `report` gets the first few (block, value, bits).
inline int64_t count_bit_mismatches(const DecodeVectors& v, const float* got, std::string& report) {
  int64_t mismatches = 0;
  std::ostringstream out;
  for (size_t i = 0; i < v.expected.size(); ++i) {
    if (bits_of(got[i]) == bits_of(v.expected[i])) continue;
    if (++mismatches <= 8) {
      const int64_t block = static_cast<int64_t>(i) / v.block_values;
      out << "  block " << block << (block < v.n_quantized ? " (quantized)" : " (fuzz)")
          << " value " << i % v.block_values << ": got " << got[i] << " (0x" << std::hex
          << bits_of(got[i]) << "), expected " << std::dec << v.expected[i] << " (0x" << std::hex
          << bits_of(v.expected[i]) << std::dec << ")\n";
    }
  }
  report = out.str();
  return mismatches;
}

}  // namespace strata::test

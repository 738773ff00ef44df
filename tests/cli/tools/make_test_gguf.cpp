// Writes the GGUF files the CLI hardening test needs: a small valid MoE model whose weights are
// real random blocks (finite scales, finite router), and damaged variants of it.
// Usage: make_test_gguf CASE OUT.gguf
//   good          2 MoE layers (qwen3moe, d 256, f 128, E 4, k 2)
//   overlap       blk.0's gate tensor placed over its router
//   blk00         an extra blk.00.ffn_gate_exps.weight next to blk.0's
//   arch-int      general.architecture stored as a u32
//   nan-scale     good, with one NaN block scale in blk.0.ffn_down_exps (expert 1, row 3, block 1)
//   inf-scale     good, with one Inf block scale in blk.1.ffn_gate_exps (expert 2, row 0, block 0)
//   nan-router    good, with a NaN in blk.0.ffn_gate_inp
//   escape-name   a tensor named "blk.0.\x1b[31mevil\a" over another, and an escape sequence in
//                 general.architecture
//   nul-name      an extra tensor "blk.0.ffn_<NUL>evil.weight" in blk.0
//   split-huge    good, marked shard 1 of 2^31 - 1 (split.count a u64)
//   split-3       good, marked shard 1 of 3 (to be named ...-00001-of-00002.gguf)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "gguf_writer.hpp"
#include "synth/synth.hpp"

namespace {

using strata::GgmlType;
using strata::test::GgufWriter;

constexpr int64_t kD = 256, kF = 128, kExperts = 4;

std::vector<uint8_t> router_bytes(uint64_t seed) {
  std::vector<float> values(kD * kExperts);
  strata::synth::Rng rng(seed);
  for (float& v : values) v = static_cast<float>(0.1 * rng.normal());
  std::vector<uint8_t> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

void put_f16(std::vector<uint8_t>& bytes, size_t at, uint16_t bits) {
  bytes.at(at) = static_cast<uint8_t>(bits & 0xFF);
  bytes.at(at + 1) = static_cast<uint8_t>(bits >> 8);
}

GgufWriter model(const std::string& which) {
  GgufWriter w;
  const auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
  if (which == "arch-int")
    w.kv("general.architecture", strata::test::meta_u32(3));
  else if (which == "escape-name")
    w.kv("general.architecture", strata::test::meta_string("qwen3moe\x1b[2J"));
  else
    w.kv("general.architecture", strata::test::meta_string("qwen3moe"));
  const std::string arch = which == "escape-name" ? "qwen3moe\x1b[2J" : "qwen3moe";
  w.kv(arch + ".block_count", strata::test::meta_u32(2));
  w.kv(arch + ".embedding_length", strata::test::meta_u32(kD));
  w.kv(arch + ".expert_feed_forward_length", strata::test::meta_u32(kF));
  w.kv(arch + ".expert_count", strata::test::meta_u32(kExperts));
  w.kv(arch + ".expert_used_count", strata::test::meta_u32(2));
  for (int l = 0; l < 2; ++l) {
    const std::string blk = "blk." + std::to_string(l) + ".";
    const uint64_t seed = 100 + static_cast<uint64_t>(l) * 10;
    std::vector<uint8_t> router = router_bytes(seed);
    if (which == "nan-router" && l == 0) {
      const float nan = std::nanf("");
      std::memcpy(router.data() + 4 * (2 * kD + 7), &nan, 4);
    }
    w.tensor(blk + "ffn_gate_inp.weight", GgmlType::F32, {u(kD), u(kExperts)}).data = router;
    std::vector<uint8_t> gate =
        strata::synth::random_expert_tensor(GgmlType::IQ3_S, kD, kF, kExperts, 1.0 / 16, seed + 1);
    if (which == "inf-scale" && l == 1) put_f16(gate, 2 * (kF * 110), 0x7C00);  // expert 2, row 0
    w.tensor(blk + "ffn_gate_exps.weight", GgmlType::IQ3_S, {u(kD), u(kF), u(kExperts)}).data =
        gate;
    w.tensor(blk + "ffn_up_exps.weight", GgmlType::IQ3_S, {u(kD), u(kF), u(kExperts)}).data =
        strata::synth::random_expert_tensor(GgmlType::IQ3_S, kD, kF, kExperts, 1.0 / 16, seed + 2);
    std::vector<uint8_t> down = strata::synth::random_expert_tensor(
        GgmlType::Q2_0, kF, kD, kExperts, 2.0 / std::sqrt(double(kF)), seed + 3);
    // Q2_0 rows of f = 128 values: 2 blocks of 18 bytes; expert 1, row 3, block 1.
    if (which == "nan-scale" && l == 0) put_f16(down, (1 * kD + 3) * 36 + 18, 0x7E00);
    w.tensor(blk + "ffn_down_exps.weight", GgmlType::Q2_0, {u(kF), u(kD), u(kExperts)}).data = down;
  }
  if (which == "blk00")
    w.tensor("blk.00.ffn_gate_exps.weight", GgmlType::IQ3_S, {u(kD), u(kF), u(kExperts)});
  if (which == "escape-name") w.tensor("blk.0.\x1b[31mevil\a", GgmlType::F32, {8}).offset = 0;
  if (which == "nul-name") {
    static const char kName[] = "blk.0.ffn_\0evil.weight";
    w.tensor(std::string(kName, sizeof kName - 1), GgmlType::F32, {8});
  }
  if (which == "split-huge" || which == "split-3") {
    w.kv("split.no", strata::test::meta_u32(0));
    w.kv("split.count", which == "split-3" ? strata::test::meta_u32(3)
                                           : strata::test::meta_u64((uint64_t{1} << 31) - 1));
  }
  return w;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: make_test_gguf CASE OUT.gguf\n");
    return 2;
  }
  const std::string which = argv[1];
  const std::vector<std::string> known = {"good",        "overlap",   "blk00",      "arch-int",
                                          "nan-scale",   "inf-scale", "nan-router", "escape-name",
                                          "nul-name",    "split-huge", "split-3"};
  if (std::find(known.begin(), known.end(), which) == known.end()) {
    std::fprintf(stderr, "make_test_gguf: unknown case '%s'\n", which.c_str());
    return 2;
  }
  GgufWriter w = model(which);
  strata::test::GgufImage image = w.build();
  if (which == "overlap") {
    // Tensor infos: blk.0.ffn_gate_inp (#0), blk.0.ffn_gate_exps (#1); point #1's offset at #0's.
    const size_t at =
        image.info_offsets[1] + 8 + std::strlen("blk.0.ffn_gate_exps.weight") + 4 + 3 * 8 + 4;
    for (int i = 0; i < 8; ++i)
      image.bytes[at + i] = static_cast<uint8_t>(image.tensor_offsets[0] >> (8 * i));
  }
  FILE* out = std::fopen(argv[2], "wb");
  if (out == nullptr ||
      std::fwrite(image.bytes.data(), 1, image.bytes.size(), out) != image.bytes.size() ||
      std::fclose(out) != 0) {
    std::fprintf(stderr, "make_test_gguf: cannot write %s\n", argv[2]);
    return 1;
  }
  return 0;
}

// Damaged GGUF files: each damage class throws strata::Error with the right status and a
// message naming the key or tensor; none crashes, hangs or allocates from a forged count.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <random>

#include "common/error.hpp"
#include "gguf/gguf.hpp"
#include "gguf_writer.hpp"
#include "test_support.hpp"

namespace strata {
namespace {

using gguf::File;
using gguf::ValueType;
using test::GgufWriter;

// Runs fn and checks it throws Error with `status` and a message containing every needle.
void expect_error(const std::function<void()>& fn, Status status,
                  std::vector<std::string> needles) {
  try {
    fn();
    ADD_FAILURE() << "no error thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), status) << e.what();
    for (const auto& needle : needles)
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
          << "message '" << e.what() << "' lacks '" << needle << "'";
  }
}

void expect_bad_file(const std::vector<uint8_t>& bytes, std::vector<std::string> needles) {
  expect_error([&] { File::parse(bytes, "damaged.gguf"); }, Status::kBadFile, std::move(needles));
}

void expect_bad_layers(const std::vector<uint8_t>& bytes, Status status,
                       std::vector<std::string> needles) {
  const File file = File::parse(bytes, "layers.gguf");
  expect_error([&] { gguf::discover_moe_layers(file); }, status, std::move(needles));
}

void put_u32(std::vector<uint8_t>& bytes, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) bytes.at(at + i) = static_cast<uint8_t>(v >> (8 * i));
}
void put_u64(std::vector<uint8_t>& bytes, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) bytes.at(at + i) = static_cast<uint8_t>(v >> (8 * i));
}

// A file exercising every metadata type, nested arrays and several tensors.
GgufWriter rich_writer() {
  auto w = test::moe_writer({});
  w.kv("test.strings",
       test::meta_array(ValueType::STRING, {test::meta_string("x"), test::meta_string("yz")}));
  w.kv("test.nested",
       test::meta_array(
           ValueType::ARRAY,
           {test::meta_array(ValueType::U16, {gguf::MetaValue{ValueType::U16, uint64_t{7}}})}));
  w.kv("test.f64", gguf::MetaValue{ValueType::F64, 2.5});
  w.kv("test.bool", test::meta_bool(false));
  w.kv("test.i64", gguf::MetaValue{ValueType::I64, int64_t{-1}});
  return w;
}

// Every prefix of the header, metadata and tensor infos, and prefixes spread through the data.
void check_truncations(const std::vector<uint8_t>& bytes, size_t data_offset,
                       const std::string& what) {
  ASSERT_NO_THROW(File::parse(bytes, what));
  std::vector<size_t> lengths;
  for (size_t n = 0; n <= data_offset; ++n) lengths.push_back(n);
  for (size_t n = data_offset; n < bytes.size(); n += 4099) lengths.push_back(n);
  lengths.push_back(bytes.size() - 1);
  for (size_t n : lengths) {
    const std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + n);
    try {
      File::parse(prefix, what);
      ADD_FAILURE() << what << " truncated to " << n << " bytes parsed without error";
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), Status::kBadFile) << n << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  }
}

TEST(GgufDamage, TruncatedModelAtManyOffsets) {
  const auto bytes = test::read_file_bytes(test::data_dir() / "vectors" / "moe" / "model.gguf");
  const File file = File::parse(bytes, "model");
  check_truncations(bytes, file.data_offset(), "model");
}

TEST(GgufDamage, TruncatedSyntheticAtEveryOffset) {
  const auto image = rich_writer().build();
  check_truncations(image.bytes, image.data_offset, "rich");
}

TEST(GgufDamage, TruncatedInTensorDataNamesTheTensor) {
  const auto image = test::moe_writer({}).build();
  const std::vector<uint8_t> cut(image.bytes.begin(), image.bytes.end() - 100);
  expect_bad_file(cut, {"blk.1.ffn_down_exps.weight", "past the end"});
}

TEST(GgufDamage, BadMagic) {
  auto bytes = test::moe_writer({}).build().bytes;
  bytes[0] = 'G';
  bytes[3] = 'G';
  expect_bad_file(bytes, {"not a GGUF file", "magic"});
}

TEST(GgufDamage, UnsupportedVersions) {
  auto w = test::moe_writer({});
  w.version = 1;
  expect_bad_file(w.build().bytes, {"version 1", "not supported"});
  for (uint32_t version : {0u, 4u, 77u}) {
    w.version = version;
    expect_bad_file(w.build().bytes, {"unsupported GGUF version " + std::to_string(version)});
  }
  w.version = 0x03000000u;  // a big-endian v3 read as little-endian
  expect_bad_file(w.build().bytes, {"big-endian"});
}

TEST(GgufDamage, AbsurdTensorCount) {
  for (uint64_t count : {uint64_t{1} << 40, ~uint64_t{0}}) {
    auto w = test::moe_writer({});
    w.tensor_count_override = count;
    expect_bad_file(w.build().bytes, {"tensor count " + std::to_string(count)});
  }
}

TEST(GgufDamage, AbsurdKvCount) {
  for (uint64_t count : {uint64_t{1} << 40, ~uint64_t{0}}) {
    auto w = test::moe_writer({});
    w.kv_count_override = count;
    expect_bad_file(w.build().bytes, {"key/value count " + std::to_string(count)});
  }
}

TEST(GgufDamage, KeyLengthPastTheEnd) {
  auto w = test::moe_writer({});
  const auto image = w.build();
  auto bytes = image.bytes;
  put_u64(bytes, image.kv_offsets[2], uint64_t{1} << 50);
  expect_bad_file(bytes, {"metadata key #2", "key length", "past the end"});
}

TEST(GgufDamage, StringValueLengthPastTheEnd) {
  GgufWriter w;
  w.kv("general.name", test::meta_string("abc"));
  const auto image = w.build();
  auto bytes = image.bytes;
  // key length + key + value type, then the string's length field.
  put_u64(bytes, image.kv_offsets[0] + 8 + 12 + 4, 0x7FFFFFFFFFFFull);
  expect_bad_file(bytes, {"general.name", "past the end"});
}

TEST(GgufDamage, ArrayLengthPastTheEnd) {
  for (ValueType element : {ValueType::U8, ValueType::U64, ValueType::STRING, ValueType::ARRAY}) {
    GgufWriter w;
    w.kv("tokenizer.ggml.scores", test::meta_array(element, {}));
    const auto image = w.build();
    auto bytes = image.bytes;
    const size_t count_at = image.kv_offsets[0] + 8 + 21 + 4 + 4;
    put_u64(bytes, count_at, bytes.size());  // more elements than bytes left for any type
    expect_bad_file(bytes, {"tokenizer.ggml.scores", "array of"});
    put_u64(bytes, count_at, ~uint64_t{0});
    expect_bad_file(bytes, {"tokenizer.ggml.scores"});
  }
}

TEST(GgufDamage, ArraysNestedTooDeep) {
  gguf::MetaValue v = test::meta_array(ValueType::U8, {});
  for (int depth = 0; depth < 20; ++depth) v = test::meta_array(ValueType::ARRAY, {v});
  GgufWriter w;
  w.kv("deep", v);
  expect_bad_file(w.build().bytes, {"deep", "nested deeper"});
}

TEST(GgufDamage, UnknownValueTypeAndBadBool) {
  GgufWriter w;
  w.kv_raw("odd.type", 13, {0, 0, 0, 0});
  expect_bad_file(w.build().bytes, {"odd.type", "unknown value type 13"});
  GgufWriter b;
  b.kv_raw("odd.bool", static_cast<uint32_t>(ValueType::BOOL), {2});
  expect_bad_file(b.build().bytes, {"odd.bool", "bool"});
}

TEST(GgufDamage, DuplicateKeyAndTensor) {
  auto w = test::moe_writer({});
  w.kv("qwen3moe.expert_count", test::meta_u32(4));
  expect_bad_file(w.build().bytes, {"qwen3moe.expert_count", "duplicate key"});
  auto t = test::moe_writer({});
  t.tensor("blk.0.ffn_down_exps.weight", GgmlType::F32, {4});
  expect_bad_file(t.build().bytes, {"blk.0.ffn_down_exps.weight", "duplicate tensor"});
}

TEST(GgufDamage, TensorDataPastTheEnd) {
  GgufWriter w;
  w.tensor("first", GgmlType::F32, {8});
  w.tensor("second", GgmlType::F32, {8}).offset = 1 << 20;
  auto bytes = w.build().bytes;
  bytes.resize(4096);  // the writer placed "second" at 1 MiB; cut the file well before it
  expect_bad_file(bytes, {"second", "past the end"});
  GgufWriter huge;
  huge.tensor("huge", GgmlType::F32, {8}).offset = ~uint64_t{0} - 31;  // offset + bytes overflows
  expect_bad_file(huge.build().bytes, {"huge"});
}

TEST(GgufDamage, UnknownTypeId) {
  GgufWriter w;
  w.tensor_raw(
      {"weird", 4, {32}, std::vector<uint8_t>(64), std::nullopt});  // id 4 (Q4_2) was removed
  expect_bad_file(w.build().bytes, {"weird", "unknown ggml type id 4"});
  GgufWriter big;
  big.tensor_raw({"weirder", 0xFFFFFFFFu, {32}, std::vector<uint8_t>(64), std::nullopt});
  expect_bad_file(big.build().bytes, {"weirder", "unknown ggml type id 4294967295"});
}

TEST(GgufDamage, NeProductOverflow) {
  GgufWriter w;
  w.tensor_raw(
      {"wide", 0, {uint64_t{1} << 32, uint64_t{1} << 32}, std::vector<uint8_t>(32), std::nullopt});
  expect_bad_file(w.build().bytes, {"wide", "overflows"});
  GgufWriter negative;
  negative.tensor_raw({"negative", 0, {~uint64_t{0}}, std::vector<uint8_t>(32), std::nullopt});
  expect_bad_file(negative.build().bytes, {"negative", "negative"});
  // Fits int64 as elements but not as bytes: 2^61 f64 values.
  GgufWriter bytes;
  bytes.tensor_raw({"bytes",
                    static_cast<uint32_t>(GgmlType::F64),
                    {uint64_t{1} << 61},
                    std::vector<uint8_t>(32),
                    std::nullopt});
  expect_bad_file(bytes.build().bytes, {"bytes", "overflows"});
}

TEST(GgufDamage, BadDimensionsAndBlockMultiple) {
  for (uint64_t dims : {0u, 5u}) {
    GgufWriter w;
    w.tensor("t", GgmlType::F32, {4});
    auto image = w.build();
    put_u32(image.bytes, image.info_offsets[0] + 8 + 1, static_cast<uint32_t>(dims));
    expect_bad_file(image.bytes, {"tensor 't'", "dimensions"});
  }
  GgufWriter w;
  w.tensor_raw({"ragged",
                static_cast<uint32_t>(GgmlType::IQ3_S),
                {100, 2},
                std::vector<uint8_t>(256),
                std::nullopt});
  expect_bad_file(w.build().bytes, {"ragged", "not a multiple"});
}

TEST(GgufDamage, MisalignedDataOffset) {
  GgufWriter w;
  w.tensor("first", GgmlType::F32, {8});
  w.tensor("shifted", GgmlType::F32, {8}).offset = 34;
  expect_bad_file(w.build().bytes, {"shifted", "not a multiple of the alignment 32"});
}

TEST(GgufDamage, BadAlignment) {
  for (uint32_t alignment : {0u, 3u, 48u}) {
    GgufWriter w;
    w.kv("general.alignment", test::meta_u32(alignment));
    expect_bad_file(w.build().bytes, {"general.alignment", "power of two"});
  }
  GgufWriter s;
  s.kv("general.alignment", test::meta_string("32"));
  expect_bad_file(s.build().bytes, {"general.alignment", "integer"});
}

// ---- layer discovery on files whose tensors disagree ----------------------------------------

TEST(GgufLayerDamage, HyperparameterMismatch) {
  test::MoeFileSpec spec;
  spec.d = 512;  // tensors at d = 512 but embedding_length below says 256
  auto m = test::moe_writer(spec);
  auto image = m.build();
  // Patch embedding_length (4th key) from 512 to 256.
  const size_t value_at =
      image.kv_offsets[3] + 8 + std::string("qwen3moe.embedding_length").size() + 4;
  put_u32(image.bytes, value_at, 256);
  expect_bad_layers(image.bytes, Status::kBadFile,
                    {"blk.0.ffn_gate_exps.weight", "embedding_length"});
}

TEST(GgufLayerDamage, ExpertCountAndUsedCount) {
  auto image = test::moe_writer({}).build();
  const size_t count_at = image.kv_offsets[5] + 8 + std::string("qwen3moe.expert_count").size() + 4;
  put_u32(image.bytes, count_at, 8);
  expect_bad_layers(image.bytes, Status::kBadFile, {"blk.0.ffn_gate_exps.weight", "expert_count"});
  auto used = test::moe_writer({}).build();
  const size_t used_at =
      used.kv_offsets[6] + 8 + std::string("qwen3moe.expert_used_count").size() + 4;
  put_u32(used.bytes, used_at, 5);  // 4 experts
  expect_bad_layers(used.bytes, Status::kBadFile,
                    {"expert_used_count", "blk.0.ffn_gate_exps.weight"});
}

TEST(GgufLayerDamage, LayerBeyondBlockCount) {
  test::MoeFileSpec spec;
  auto image = test::moe_writer(spec).build();
  const size_t at = image.kv_offsets[2] + 8 + std::string("qwen3moe.block_count").size() + 4;
  put_u32(image.bytes, at, 1);
  expect_bad_layers(image.bytes, Status::kBadFile, {"blk.1.", "block_count"});
}

TEST(GgufLayerDamage, ShapeDisagreements) {
  GgufWriter w;
  w.tensor("blk.0.ffn_gate_exps.weight", GgmlType::IQ3_S, {256, 64, 2});
  w.tensor("blk.0.ffn_up_exps.weight", GgmlType::IQ3_S, {256, 64, 2});
  w.tensor("blk.0.ffn_down_exps.weight", GgmlType::Q2_0, {128, 256, 2});
  expect_bad_layers(w.build().bytes, Status::kBadFile,
                    {"blk.0.ffn_down_exps.weight", "expected [64, 256, 2]"});

  GgufWriter up;
  up.tensor("blk.0.ffn_gate_exps.weight", GgmlType::IQ3_S, {256, 64, 2});
  up.tensor("blk.0.ffn_up_exps.weight", GgmlType::IQ3_S, {256, 64, 3});
  up.tensor("blk.0.ffn_down_exps.weight", GgmlType::Q2_0, {64, 256, 2});
  expect_bad_layers(up.build().bytes, Status::kBadFile, {"blk.0.ffn_up_exps.weight"});

  GgufWriter flat;
  flat.tensor("blk.0.ffn_gate_exps.weight", GgmlType::IQ3_S, {256, 128});
  flat.tensor("blk.0.ffn_up_exps.weight", GgmlType::IQ3_S, {256, 64, 2});
  flat.tensor("blk.0.ffn_down_exps.weight", GgmlType::Q2_0, {64, 256, 2});
  expect_bad_layers(flat.build().bytes, Status::kBadFile,
                    {"blk.0.ffn_gate_exps.weight", "dimensions"});

  GgufWriter router;
  router.tensor("blk.0.ffn_gate_inp.weight", GgmlType::F32, {256, 3});
  router.tensor("blk.0.ffn_gate_exps.weight", GgmlType::IQ3_S, {256, 64, 2});
  router.tensor("blk.0.ffn_up_exps.weight", GgmlType::IQ3_S, {256, 64, 2});
  router.tensor("blk.0.ffn_down_exps.weight", GgmlType::Q2_0, {64, 256, 2});
  expect_bad_layers(router.build().bytes, Status::kBadFile, {"blk.0.ffn_gate_inp.weight"});

  GgufWriter odd;
  odd.tensor("blk.0.ffn_gate_up_exps.weight", GgmlType::IQ3_S, {256, 65, 2});
  odd.tensor("blk.0.ffn_down_exps.weight", GgmlType::Q2_0, {64, 256, 2});
  expect_bad_layers(odd.build().bytes, Status::kBadFile, {"blk.0.ffn_gate_up_exps.weight", "odd"});
}

TEST(GgufLayerDamage, MissingTensor) {
  GgufWriter w;
  w.tensor("blk.2.ffn_gate_exps.weight", GgmlType::IQ3_S, {256, 64, 2});
  w.tensor("blk.2.ffn_up_exps.weight", GgmlType::IQ3_S, {256, 64, 2});
  expect_bad_layers(w.build().bytes, Status::kBadFile, {"blk.2.ffn_down_exps.weight", "missing"});
  GgufWriter both;
  both.tensor("blk.0.ffn_gate_up_exps.weight", GgmlType::IQ3_S, {256, 128, 2});
  both.tensor("blk.0.ffn_gate_exps.weight", GgmlType::IQ3_S, {256, 64, 2});
  both.tensor("blk.0.ffn_down_exps.weight", GgmlType::Q2_0, {64, 256, 2});
  expect_bad_layers(both.build().bytes, Status::kBadFile,
                    {"blk.0.ffn_gate_up_exps.weight", "both"});
}

TEST(GgufLayerDamage, UnsupportedExpertFormat) {
  GgufWriter w;
  w.tensor("blk.0.ffn_gate_exps.weight", GgmlType::F64, {256, 64, 2});
  w.tensor("blk.0.ffn_up_exps.weight", GgmlType::IQ3_S, {256, 64, 2});
  w.tensor("blk.0.ffn_down_exps.weight", GgmlType::Q2_0, {64, 256, 2});
  expect_bad_layers(w.build().bytes, Status::kUnsupported, {"blk.0.ffn_gate_exps.weight", "f64"});
}

// ---- consistency between tensors and of known keys --------------------------------------------

TEST(GgufDamage, TensorsAtOneOffset) {
  GgufWriter w;
  w.tensor("first", GgmlType::F32, {8});
  w.tensor("second", GgmlType::F32, {8}).offset = 0;
  expect_bad_file(w.build().bytes, {"'second'", "overlaps tensor 'first'"});
}

TEST(GgufDamage, TensorRunsIntoTheNext) {
  // "first" is written as 32 f32 values, then its type is changed to f64: 256 bytes over
  // "second" at offset 128.
  GgufWriter w;
  w.tensor("first", GgmlType::F32, {32});
  w.tensor("second", GgmlType::F32, {32});
  auto image = w.build();
  const size_t type_at = image.info_offsets[0] + 8 + 5 + 4 + 8;
  put_u32(image.bytes, type_at, static_cast<uint32_t>(GgmlType::F64));
  image.bytes.resize(image.bytes.size() + 256, 0);  // keep every tensor inside the file
  expect_bad_file(image.bytes, {"'second'", "overlaps tensor 'first'", "256 bytes"});
}

TEST(GgufDamage, ExpertTensorOverTheRouter) {
  auto w = test::moe_writer({});
  auto image = w.build();
  // Point blk.0's gate tensor (info #2) at the router's data (info #1).
  const uint64_t router_offset = image.tensor_offsets[1];
  const size_t name_bytes = std::string("blk.0.ffn_gate_exps.weight").size();
  put_u64(image.bytes, image.info_offsets[2] + 8 + name_bytes + 4 + 3 * 8 + 4, router_offset);
  expect_bad_file(image.bytes, {"blk.0.ffn_gate_exps.weight", "overlaps", "blk.0.ffn_gate_inp"});
}

TEST(GgufDamage, EmptyTensorsShareAnOffset) {
  GgufWriter w;
  w.tensor("data", GgmlType::F32, {8});
  w.tensor("empty", GgmlType::F32, {0}).offset = 0;  // zero bytes overlap nothing
  EXPECT_NO_THROW(File::parse(w.build().bytes, "empty.gguf"));
}

TEST(GgufDamage, KnownKeyOfTheWrongType) {
  GgufWriter arch;
  arch.kv("general.architecture", test::meta_u32(7));
  expect_bad_file(arch.build().bytes, {"general.architecture", "value type u32", "expected string"});
  GgufWriter name;
  name.kv("general.name", test::meta_f32(1.0f));
  expect_bad_file(name.build().bytes, {"general.name", "value type f32", "expected string"});
  GgufWriter alignment;
  alignment.kv("general.alignment", test::meta_bool(true));
  expect_bad_file(alignment.build().bytes,
                  {"general.alignment", "value type bool", "expected an integer"});
  GgufWriter quant;
  quant.kv("general.quantization_version", test::meta_string("2"));
  expect_bad_file(quant.build().bytes, {"general.quantization_version", "value type string"});
}

TEST(GgufLayerDamage, HyperparameterOfTheWrongType) {
  GgufWriter typed;
  typed.kv("general.architecture", test::meta_string("qwen3moe"));
  typed.kv("qwen3moe.expert_count", test::meta_f32(4.0f));
  typed.kv("qwen3moe.embedding_length", test::meta_string("256"));
  const File file = File::parse(typed.build().bytes, "typed.gguf");
  expect_error([&] { gguf::discover_moe_layers(file); }, Status::kBadFile,
               {"typed.gguf", "qwen3moe.embedding_length", "value type string",
                "expected an integer"});
  GgufWriter negative;
  negative.kv("general.architecture", test::meta_string("qwen3moe"));
  negative.kv("qwen3moe.expert_count", test::meta_i32(-4));
  const File neg = File::parse(negative.build().bytes, "negative.gguf");
  expect_error([&] { gguf::discover_moe_layers(neg); }, Status::kBadFile,
               {"qwen3moe.expert_count", "-4 is negative"});
}

TEST(GgufLayerDamage, LayerNumberSpelledTwoWays) {
  auto w = test::moe_writer({});
  w.tensor("blk.00.ffn_gate_exps.weight", GgmlType::IQ3_S, {256, 128, 4});
  expect_bad_layers(w.build().bytes, Status::kBadFile,
                    {"blk.00.ffn_gate_exps.weight", "'00'", "canonically", "'blk.0.'"});
  auto leading = test::moe_writer({});
  leading.tensor("blk.01.attn_q.weight", GgmlType::F32, {8});
  expect_bad_layers(leading.build().bytes, Status::kBadFile, {"blk.01.attn_q.weight"});
  // Names that are not layer numbers at all stay outside discovery.
  auto other = test::moe_writer({});
  other.tensor("blk.x1.ffn_gate_exps.weight", GgmlType::F32, {8});
  other.tensor("blk.+1.ffn_gate_exps.weight", GgmlType::F32, {8});
  const File file = File::parse(other.build().bytes, "other.gguf");
  EXPECT_EQ(gguf::discover_moe_layers(file).size(), 2u);
}

// Random byte flips in the header region: any outcome but a crash or a non-Error exception.
TEST(GgufDamage, RandomByteFlips) {
  const auto image = rich_writer().build();
  const uint64_t seed = test::fresh_seed("RandomByteFlips");
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 2000; ++trial) {
    auto bytes = image.bytes;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < flips; ++i)
      bytes[rng() % image.data_offset] ^= static_cast<uint8_t>(1 + rng() % 255);
    try {
      const File file = File::parse(bytes, "flipped");
      gguf::discover_moe_layers(file);
    } catch (const Error&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << "seed " << seed << " trial " << trial << ": non-strata exception "
                    << e.what();
    }
  }
}

}  // namespace
}  // namespace strata

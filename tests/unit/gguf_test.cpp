// The GGUF reader and MoE layer discovery on the bundled model and on synthetic files.
#include "gguf/gguf.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "common/error.hpp"
#include "gguf_writer.hpp"
#include "test_support.hpp"

namespace strata {
namespace {

using gguf::File;
using gguf::MetaValue;
using gguf::ValueType;
using test::GgufWriter;

std::filesystem::path model_path() {
  return test::data_dir() / "vectors" / "moe" / "model.gguf";
}

TEST(GgufModel, HeaderAndMetadata) {
  const File file = File::open(model_path());
  EXPECT_EQ(file.version(), 3u);
  EXPECT_EQ(file.alignment(), 32u);
  EXPECT_EQ(file.data_offset() % 32, 0u);
  EXPECT_EQ(file.architecture(), "qwen3moe");
  EXPECT_EQ(file.path(), model_path().string());
  EXPECT_EQ(file.tensors().size(), 8u);
  ASSERT_NE(file.find("qwen3moe.expert_count"), nullptr);
  EXPECT_EQ(file.find("qwen3moe.expert_count")->as_int(), 16);
  EXPECT_EQ(file.find("qwen3moe.embedding_length")->as_int(), 512);
  EXPECT_EQ(file.find("qwen3moe.expert_feed_forward_length")->as_int(), 192);
  EXPECT_EQ(file.find("qwen3moe.expert_used_count")->as_int(), 4);
  EXPECT_EQ(file.find("qwen3moe.block_count")->as_int(), 2);
  EXPECT_EQ(file.find("general.name")->as_string(), "moe-testcase-public");
  EXPECT_EQ(file.find("general.name")->as_int(), std::nullopt);
  EXPECT_EQ(file.find("no.such.key"), nullptr);
}

TEST(GgufModel, TensorShapesTypesAndBytes) {
  const File file = File::open(model_path());
  const auto file_bytes = std::filesystem::file_size(model_path());
  for (int layer = 0; layer < 2; ++layer) {
    const std::string blk = "blk." + std::to_string(layer) + ".";
    const auto* router = file.find_tensor(blk + "ffn_gate_inp.weight");
    const auto* gate = file.find_tensor(blk + "ffn_gate_exps.weight");
    const auto* up = file.find_tensor(blk + "ffn_up_exps.weight");
    const auto* down = file.find_tensor(blk + "ffn_down_exps.weight");
    ASSERT_TRUE(router && gate && up && down);
    EXPECT_EQ(router->type, GgmlType::F32);
    EXPECT_EQ(router->ne, (std::vector<int64_t>{512, 16}));
    EXPECT_EQ(router->bytes, 512u * 16 * 4);
    EXPECT_EQ(gate->type, GgmlType::IQ3_S);
    EXPECT_EQ(gate->ne, (std::vector<int64_t>{512, 192, 16}));
    EXPECT_EQ(gate->bytes, 512u / 256 * 110 * 192 * 16);
    EXPECT_EQ(up->ne, gate->ne);
    EXPECT_EQ(down->type, GgmlType::Q2_0);
    EXPECT_EQ(down->ne, (std::vector<int64_t>{192, 512, 16}));
    EXPECT_EQ(down->bytes, 192u / 64 * 18 * 512 * 16);
    for (const auto* t : {router, gate, up, down}) {
      EXPECT_EQ(t->offset % 32, 0u) << t->name;
      EXPECT_EQ(t->data, file.find_tensor(t->name)->data);
      EXPECT_LE(file.data_offset() + t->offset + t->bytes, file_bytes) << t->name;
    }
  }
  EXPECT_EQ(file.find_tensor("blk.2.ffn_gate_exps.weight"), nullptr);
}

TEST(GgufModel, DataPointsIntoTheFileBytes) {
  const File file = File::open(model_path());
  const auto bytes = test::read_file_bytes(model_path());
  const auto* down = file.find_tensor("blk.1.ffn_down_exps.weight");
  ASSERT_NE(down, nullptr);
  const size_t at = file.data_offset() + down->offset;
  ASSERT_TRUE(std::equal(down->data, down->data + down->bytes, bytes.begin() + at));
  // parse() over an in-memory image finds the same layout.
  const File same = File::parse(bytes, "copy");
  EXPECT_EQ(same.data_offset(), file.data_offset());
  EXPECT_EQ(same.find_tensor(down->name)->data, bytes.data() + at);
}

TEST(GgufModel, DiscoversTwoMoeLayers) {
  const File file = File::open(model_path());
  const auto layers = gguf::discover_moe_layers(file);
  ASSERT_EQ(layers.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    const auto& l = layers[i];
    EXPECT_EQ(l.layer, i);
    EXPECT_EQ(l.weights.d, 512);
    EXPECT_EQ(l.weights.f, 192);
    EXPECT_EQ(l.weights.n_expert, 16);
    EXPECT_EQ(l.n_expert_used, 4);
    EXPECT_FALSE(l.merged_gate_up);
    const std::string blk = "blk." + std::to_string(i) + ".";
    EXPECT_EQ(l.router, file.find_tensor(blk + "ffn_gate_inp.weight"));
    EXPECT_EQ(l.shared_gate, nullptr);
    EXPECT_EQ(l.weights.gate.type, GgmlType::IQ3_S);
    EXPECT_EQ(l.weights.down.type, GgmlType::Q2_0);
    EXPECT_EQ(l.weights.gate.data, file.find_tensor(blk + "ffn_gate_exps.weight")->data);
    EXPECT_EQ(l.weights.up.data, file.find_tensor(blk + "ffn_up_exps.weight")->data);
    EXPECT_EQ(l.weights.down.row_bytes, 192u / 64 * 18);
    EXPECT_EQ(l.weights.gate.expert_stride_bytes, 2u * 110 * 192);
    EXPECT_EQ(l.bytes, 2u * (2 * 110 * 192 * 16) + 3u * 18 * 512 * 16);
  }
}

TEST(GgufModel, MissingFileIsAnIoError) {
  try {
    File::open(model_path().parent_path() / "no-such-file.gguf");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::kIo);
    EXPECT_NE(std::string(e.what()).find("no-such-file.gguf"), std::string::npos) << e.what();
  }
}

TEST(GgufModel, FileStaysValidAfterMove) {
  File file = File::open(model_path());
  const auto* t = file.find_tensor("blk.0.ffn_down_exps.weight");
  const uint8_t first = t->data[0];
  File moved = std::move(file);
  EXPECT_EQ(moved.find_tensor("blk.0.ffn_down_exps.weight"), t);
  EXPECT_EQ(t->data[0], first);
}

// Every metadata value type, nested arrays included, survives a write/parse round trip.
TEST(GgufSynthetic, AllMetadataTypesRoundTrip) {
  for (uint32_t version : {2u, 3u}) {
    GgufWriter w;
    w.version = version;
    w.kv("u8", MetaValue{ValueType::U8, uint64_t{200}});
    w.kv("i8", MetaValue{ValueType::I8, int64_t{-100}});
    w.kv("u16", MetaValue{ValueType::U16, uint64_t{60000}});
    w.kv("i16", MetaValue{ValueType::I16, int64_t{-30000}});
    w.kv("u32", test::meta_u32(4000000000u));
    w.kv("i32", test::meta_i32(-2000000000));
    w.kv("f32", test::meta_f32(1.5f));
    w.kv("bool", test::meta_bool(true));
    w.kv("string", test::meta_string("hello, gguf"));
    w.kv("u64", test::meta_u64(0xFFFFFFFFFFFFFFFFull));
    w.kv("i64", MetaValue{ValueType::I64, int64_t{-5000000000}});
    w.kv("f64", MetaValue{ValueType::F64, 0.1});
    w.kv("strings",
         test::meta_array(ValueType::STRING, {test::meta_string("a"), test::meta_string("")}));
    w.kv("nested", test::meta_array(
                       ValueType::ARRAY,
                       {test::meta_array(ValueType::I32, {test::meta_i32(1), test::meta_i32(-2)}),
                        test::meta_array(ValueType::U8, {})}));
    w.kv("empty", test::meta_array(ValueType::F32, {}));
    const auto image = w.build();
    const File file = File::parse(image.bytes, "synthetic");
    EXPECT_EQ(file.version(), version);
    EXPECT_EQ(file.alignment(), 32u);
    EXPECT_TRUE(file.tensors().empty());
    EXPECT_EQ(file.architecture(), "");
    ASSERT_EQ(file.metadata().size(), 15u);
    EXPECT_EQ(file.metadata()[0].first, "u8");  // file order is kept
    EXPECT_EQ(file.find("u8")->as_int(), 200);
    EXPECT_EQ(file.find("i8")->as_int(), -100);
    EXPECT_EQ(file.find("u16")->as_int(), 60000);
    EXPECT_EQ(file.find("i16")->as_int(), -30000);
    EXPECT_EQ(file.find("u32")->as_int(), 4000000000);
    EXPECT_EQ(file.find("i32")->as_int(), -2000000000);
    EXPECT_EQ(std::get<double>(file.find("f32")->value), 1.5);
    EXPECT_EQ(file.find("bool")->as_int(), 1);
    EXPECT_EQ(file.find("string")->as_string(), "hello, gguf");
    EXPECT_EQ(file.find("u64")->as_int(), std::nullopt);  // does not fit int64
    EXPECT_EQ(std::get<uint64_t>(file.find("u64")->value), 0xFFFFFFFFFFFFFFFFull);
    EXPECT_EQ(file.find("i64")->as_int(), -5000000000);
    EXPECT_EQ(std::get<double>(file.find("f64")->value), 0.1);
    // Re-encoding each parsed value gives back the exact bytes that were written.
    for (size_t i = 0; i < file.metadata().size(); ++i) {
      const auto& [key, value] = file.metadata()[i];
      const size_t begin = image.kv_offsets[i] + 8 + key.size() + 4;
      const size_t end =
          i + 1 < image.kv_offsets.size() ? image.kv_offsets[i + 1] : image.infos_offset;
      test::Bytes again;
      encode_value(again, value);
      EXPECT_EQ(again.data,
                std::vector<uint8_t>(image.bytes.begin() + begin, image.bytes.begin() + end))
          << key;
    }
    const auto& nested = std::get<gguf::MetaArray>(file.find("nested")->value);
    EXPECT_EQ(nested.element_type, ValueType::ARRAY);
    ASSERT_EQ(nested.values.size(), 2u);
    const auto& inner = std::get<gguf::MetaArray>(nested.values[0].value);
    EXPECT_EQ(inner.element_type, ValueType::I32);
    ASSERT_EQ(inner.values.size(), 2u);
    EXPECT_EQ(inner.values[1].as_int(), -2);
    EXPECT_TRUE(std::get<gguf::MetaArray>(nested.values[1].value).values.empty());
    const auto& strings = std::get<gguf::MetaArray>(file.find("strings")->value);
    ASSERT_EQ(strings.values.size(), 2u);
    EXPECT_EQ(strings.values[0].as_string(), "a");
    EXPECT_EQ(strings.values[1].as_string(), "");
  }
}

TEST(GgufSynthetic, AlignmentKeyMovesTheDataSection) {
  for (uint64_t alignment : {1u, 8u, 64u, 4096u}) {
    GgufWriter w;
    w.alignment = alignment;
    w.kv("general.alignment", test::meta_u32(static_cast<uint32_t>(alignment)));
    w.tensor("a", GgmlType::F32, {3});
    w.tensor("b", GgmlType::Q2_0, {128, 2});
    const auto image = w.build();
    const File file = File::parse(image.bytes, "aligned");
    EXPECT_EQ(file.alignment(), alignment);
    EXPECT_EQ(file.data_offset(), image.data_offset);
    EXPECT_EQ(file.data_offset() % alignment, 0u);
    EXPECT_EQ(file.find_tensor("b")->offset, image.tensor_offsets[1]);
    EXPECT_EQ(file.find_tensor("b")->bytes, 2u * 2 * 18);
    EXPECT_EQ(file.find_tensor("b")->data,
              image.bytes.data() + image.data_offset + image.tensor_offsets[1]);
  }
}

TEST(GgufSynthetic, Version2FileDiscovers) {
  auto w = test::moe_writer({});
  w.version = 2;
  const auto image = w.build();
  const File file = File::parse(image.bytes, "v2");
  EXPECT_EQ(file.version(), 2u);
  const auto layers = gguf::discover_moe_layers(file);
  ASSERT_EQ(layers.size(), 2u);
  EXPECT_EQ(layers[1].layer, 1);
  EXPECT_EQ(layers[1].weights.d, 256);
  EXPECT_EQ(layers[1].weights.f, 128);
  EXPECT_EQ(layers[1].n_expert_used, 2);
}

TEST(GgufSynthetic, OpenReadsAWrittenFile) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("strata_gguf_test_" + std::to_string(::getpid()) + ".gguf");
  test::moe_writer({}).write(path);
  {
    const File file = File::open(path);
    EXPECT_EQ(gguf::discover_moe_layers(file).size(), 2u);
  }
  std::filesystem::remove(path);
}

TEST(GgufSynthetic, MergedGateUpViews) {
  test::MoeFileSpec spec;
  spec.merged_gate_up = true;
  spec.layers = 1;
  const auto image = test::moe_writer(spec).build();
  const File file = File::parse(image.bytes, "merged");
  const auto layers = gguf::discover_moe_layers(file);
  ASSERT_EQ(layers.size(), 1u);
  const auto& l = layers[0];
  EXPECT_TRUE(l.merged_gate_up);
  const auto* merged = file.find_tensor("blk.0.ffn_gate_up_exps.weight");
  ASSERT_NE(merged, nullptr);
  const size_t row_bytes = 256 / 256 * 110;
  EXPECT_EQ(l.weights.f, 128);
  EXPECT_EQ(l.weights.gate.out_features, 128);
  EXPECT_EQ(l.weights.up.out_features, 128);
  EXPECT_EQ(l.weights.gate.row_bytes, row_bytes);
  EXPECT_EQ(l.weights.gate.expert_stride_bytes, 2 * 128 * row_bytes);
  EXPECT_EQ(l.weights.up.expert_stride_bytes, 2 * 128 * row_bytes);
  for (int64_t e : {0, 1, 3}) {
    for (int64_t r : {0, 1, 127}) {
      EXPECT_EQ(l.weights.gate.row(e, r), merged->data + (e * 256 + r) * row_bytes);
      EXPECT_EQ(l.weights.up.row(e, r), merged->data + (e * 256 + 128 + r) * row_bytes);
    }
  }
  EXPECT_EQ(l.bytes, merged->bytes + file.find_tensor("blk.0.ffn_down_exps.weight")->bytes);
}

TEST(GgufSynthetic, SharedExpertTensors) {
  test::MoeFileSpec spec;
  spec.shared_f = 96;
  const auto image = test::moe_writer(spec).build();
  const File file = File::parse(image.bytes, "shared");
  const auto layers = gguf::discover_moe_layers(file);
  ASSERT_EQ(layers.size(), 2u);
  EXPECT_EQ(layers[1].shared_gate, file.find_tensor("blk.1.ffn_gate_shexp.weight"));
  EXPECT_EQ(layers[1].shared_up, file.find_tensor("blk.1.ffn_up_shexp.weight"));
  EXPECT_EQ(layers[1].shared_down, file.find_tensor("blk.1.ffn_down_shexp.weight"));
  EXPECT_EQ(layers[1].shared_router, file.find_tensor("blk.1.ffn_gate_inp_shexp.weight"));
  EXPECT_NE(layers[1].shared_gate, nullptr);
}

// A file without hyperparameters still discovers its layers from the shapes.
TEST(GgufSynthetic, NoHyperparameters) {
  GgufWriter w;
  w.tensor("blk.7.ffn_gate_exps.weight", GgmlType::IQ3_S, {256, 64, 2});
  w.tensor("blk.7.ffn_up_exps.weight", GgmlType::IQ3_S, {256, 64, 2});
  w.tensor("blk.7.ffn_down_exps.weight", GgmlType::Q2_0, {64, 256, 2});
  w.tensor("blk.3.attn_q.weight", GgmlType::F32, {4, 4});
  const auto image = w.build();
  const File file = File::parse(image.bytes, "bare");
  const auto layers = gguf::discover_moe_layers(file);
  ASSERT_EQ(layers.size(), 1u);
  EXPECT_EQ(layers[0].layer, 7);
  EXPECT_EQ(layers[0].n_expert_used, 0);
  EXPECT_EQ(layers[0].router, nullptr);
}

}  // namespace
}  // namespace strata

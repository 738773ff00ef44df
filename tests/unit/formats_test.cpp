// Every block format against ggml's to_float on every bundled block (realistic and fuzz), bit
// for bit; the int8 decomposition of every int8 format against the same vectors; the registry
// against the manifest.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "decode_vectors.hpp"
#include "formats/ggml_type.hpp"
#include "formats/registry.hpp"
#include "test_support.hpp"

namespace {

using strata::FormatInfo;
using strata::SubScale;
using strata::test::DecodeVectors;

// ---- compile-time checks over the whole list ------------------------------------------------
template <class... F>
constexpr bool ascending_ids(strata::FormatList<F...>) {
  const uint32_t ids[] = {static_cast<uint32_t>(F::kType)...};
  for (size_t i = 1; i < sizeof...(F); ++i)
    if (ids[i - 1] >= ids[i]) return false;
  return true;
}
static_assert(ascending_ids(strata::AllBlockFormats{}),
              "STRATA_BLOCK_FORMATS must be in ggml id order");

template <class... F>
constexpr bool whole_sub_blocks(strata::FormatList<F...>) {
  return ((F::kBlockValues % strata::kSubBlockValues == 0) && ...);
}
static_assert(whole_sub_blocks(strata::AllBlockFormats{}),
              "blocks must hold whole 32-value sub-blocks");

const FormatInfo& format_or_die(const std::string& name) {
  const FormatInfo* f = strata::find_block_format(name);
  if (f == nullptr) throw std::runtime_error("no registered format " + name);
  return *f;
}

class FormatVectors : public ::testing::TestWithParam<std::string> {};

TEST_P(FormatVectors, DecodeMatchesGgmlBitForBit) {
  const DecodeVectors v = strata::test::load_decode_vectors(GetParam());
  const FormatInfo& f = format_or_die(v.name);
  ASSERT_EQ(f.block_values, v.block_values);
  ASSERT_EQ(f.block_bytes, v.block_bytes);
  // Poisoned so that a value decode never writes cannot pass by accident.
  std::vector<float> got(v.expected.size(), std::numeric_limits<float>::quiet_NaN());
  for (int64_t b = 0; b < v.n_blocks; ++b)
    f.decode(v.blocks.data() + b * v.block_bytes, got.data() + b * v.block_values);
  std::string report;
  EXPECT_EQ(strata::test::count_bit_mismatches(v, got.data(), report), 0) << v.name << "\n"
                                                                          << report;
}

// value i of sub-block = scale[i/16] * q[i] (+ offset[i/16] where the format has an offset),
// evaluated as two separate IEEE operations, exactly as a kernel's fold would see it.
TEST_P(FormatVectors, Int8DecompositionMatchesGgmlBitForBit) {
  const DecodeVectors v = strata::test::load_decode_vectors(GetParam());
  const FormatInfo& f = format_or_die(v.name);
  if (!f.int8) {
    EXPECT_EQ(f.decode_sub, nullptr);
    GTEST_SKIP() << v.name << " has no int8 decomposition";
  }
  ASSERT_NE(f.decode_sub, nullptr);
  const int subs = v.block_values / strata::kSubBlockValues;
  std::vector<float> got(v.expected.size(), std::numeric_limits<float>::quiet_NaN());
  int min_code = 127, max_code = -128;
  for (int64_t b = 0; b < v.n_blocks; ++b) {
    for (int sub = 0; sub < subs; ++sub) {
      int8_t q[32];
      SubScale s{{NAN, NAN}, {NAN, NAN}};
      f.decode_sub(v.blocks.data() + b * v.block_bytes, sub, q, s);
      if (!f.split_scales) {
        ASSERT_EQ(strata::test::bits_of(s.scale[0]), strata::test::bits_of(s.scale[1]))
            << v.name << " block " << b;
        ASSERT_EQ(strata::test::bits_of(s.offset[0]), strata::test::bits_of(s.offset[1]))
            << v.name << " block " << b;
      }
      if (!f.has_offset) {
        ASSERT_EQ(strata::test::bits_of(s.offset[0]), 0u) << v.name << " block " << b;
        ASSERT_EQ(strata::test::bits_of(s.offset[1]), 0u) << v.name << " block " << b;
      }
      float* y = got.data() + b * v.block_values + sub * strata::kSubBlockValues;
      for (int i = 0; i < 32; ++i) {
        const float product = s.scale[i / 16] * static_cast<float>(q[i]);
        y[i] = f.has_offset ? product + s.offset[i / 16] : product;
        min_code = std::min<int>(min_code, q[i]);
        max_code = std::max<int>(max_code, q[i]);
      }
    }
  }
  std::string report;
  EXPECT_EQ(strata::test::count_bit_mismatches(v, got.data(), report), 0) << v.name << "\n"
                                                                          << report;
  // Only Q8_0 stores raw int8 codes, where -128 can occur; every other format stays symmetric-safe.
  EXPECT_GE(min_code, v.name == "q8_0" ? -128 : -127) << v.name;
  RecordProperty("code_range", std::to_string(min_code) + ".." + std::to_string(max_code));
}

// q10: value i of a span = scale * w[i] (+ offset), two separate IEEE operations, against ggml;
// every |w| within the format's declared W_f, which the compile-time 2^24 bound is written for.
TEST_P(FormatVectors, WideDecompositionMatchesGgmlBitForBit) {
  const DecodeVectors v = strata::test::load_decode_vectors(GetParam());
  const FormatInfo& f = format_or_die(v.name);
  ASSERT_TRUE(f.wide) << v.name << " has no wide (q10) decode";
  ASSERT_NE(f.decode_wide, nullptr);
  ASSERT_TRUE(f.wide_span == 16 || f.wide_span == 32 || f.wide_span == 64) << v.name;
  ASSERT_EQ(v.block_values % f.wide_span, 0) << v.name;
  ASSERT_LT(int64_t{f.wide_span} * strata::kQ10MaxCode * f.wide_max, int64_t{1} << 24) << v.name;
  const int spans = v.block_values / f.wide_span;
  std::vector<float> got(v.expected.size(), std::numeric_limits<float>::quiet_NaN());
  int max_abs = 0;
  for (int64_t b = 0; b < v.n_blocks; ++b) {
    for (int span = 0; span < spans; ++span) {
      std::vector<int16_t> w(static_cast<size_t>(f.wide_span), int16_t{-32768});  // poisoned
      strata::WideScale s{NAN, NAN};
      f.decode_wide(v.blocks.data() + b * v.block_bytes, span, w.data(), s);
      if (!f.has_offset) {
        ASSERT_EQ(strata::test::bits_of(s.offset), 0u) << v.name << " block " << b;
      }
      float* y = got.data() + b * v.block_values + span * f.wide_span;
      for (int i = 0; i < f.wide_span; ++i) {
        ASSERT_LE(std::abs(int{w[i]}), f.wide_max) << v.name << " block " << b << " span " << span;
        const float product = s.scale * static_cast<float>(w[i]);
        y[i] = f.has_offset ? product + s.offset : product;
        max_abs = std::max(max_abs, std::abs(int{w[i]}));
      }
    }
  }
  std::string report;
  EXPECT_EQ(strata::test::count_bit_mismatches(v, got.data(), report), 0) << v.name << "\n"
                                                                          << report;
  RecordProperty("wide_max_seen", std::to_string(max_abs));
}

INSTANTIATE_TEST_SUITE_P(AllTypes, FormatVectors,
                         ::testing::ValuesIn(strata::test::decode_vector_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

// Every registered format declares a wide decode whose spans fit the 2^24 bound; the concept
// WideBlockFormat already refuses to compile one that does not.
template <class... F>
constexpr bool all_wide(strata::FormatList<F...>) {
  return (strata::WideBlockFormat<F> && ...);
}
static_assert(all_wide(strata::AllBlockFormats{}), "every format carries the q10 wide decode");

// The bound itself: a span of 64 with W_f = 514 would reach 64 * 511 * 514 >= 2^24.
struct TooWide {
  static constexpr int kBlockValues = 64, kWideSpan = 64, kWideMax = 514;
};
struct JustFits {
  static constexpr int kBlockValues = 64, kWideSpan = 64, kWideMax = 513;
};
static_assert(!strata::wide_span_fits<TooWide>());
static_assert(strata::wide_span_fits<JustFits>());

TEST(FormatRegistry, KnowsExactlyTheManifestTypes) {
  const auto manifest = strata::test::decode_manifest();
  std::set<std::string> manifest_names;
  for (const auto& entry : manifest.at("types")) {
    const std::string name = entry.at("name").get<std::string>();
    manifest_names.insert(name);
    const FormatInfo* f = strata::find_block_format(name);
    ASSERT_NE(f, nullptr) << name;
    EXPECT_EQ(f->name, name) << "registered spelling differs from the manifest";
    EXPECT_EQ(static_cast<uint32_t>(f->type), entry.at("ggml_type_id").get<uint32_t>()) << name;
    EXPECT_EQ(f->block_values, entry.at("elements_per_block").get<int>()) << name;
    EXPECT_EQ(f->block_bytes, entry.at("bytes_per_block").get<int>()) << name;
    EXPECT_EQ(strata::find_block_format(f->type), f) << name;
  }
  std::set<std::string> registered;
  for (const FormatInfo& f : strata::block_formats()) registered.insert(std::string(f.name));
  EXPECT_EQ(registered, manifest_names);
  EXPECT_EQ(strata::block_formats().size(), manifest_names.size())
      << "a format is registered twice";
  EXPECT_EQ(strata::find_block_format("IQ3_S"), strata::find_block_format("iq3_s"));
  EXPECT_EQ(strata::find_block_format("q8_1"), nullptr)
      << "Q8_1 is an activation format, not decoded";
  EXPECT_EQ(strata::find_block_format(strata::GgmlType::F16), nullptr);
}

// The traits' sizes agree with the GGUF reader's geometry table, for every registered format.
template <class... F>
void expect_geometry_matches_ggml_type_info(strata::FormatList<F...>) {
  auto check = [](auto tag) {
    using Format = typename decltype(tag)::Format;
    const auto info = strata::ggml_type_info(static_cast<uint32_t>(Format::kType));
    ASSERT_TRUE(info.has_value()) << Format::kName;
    EXPECT_EQ(info->name, Format::kName);
    EXPECT_EQ(static_cast<int>(info->block_values), Format::kBlockValues) << Format::kName;
    EXPECT_EQ(static_cast<int>(info->block_bytes), Format::kBlockBytes) << Format::kName;
  };
  (check(strata::FormatTag<F>{}), ...);
}

TEST(FormatRegistry, TraitsGeometryMatchesGgmlTypeInfo) {
  expect_geometry_matches_ggml_type_info(strata::AllBlockFormats{});
}

TEST(FormatRegistry, VisitFormatReachesEachTypeOnce) {
  for (const FormatInfo& f : strata::block_formats()) {
    int calls = 0;
    int visited_bytes = 0;
    EXPECT_TRUE(strata::visit_format(f.type, [&](auto tag) {
      ++calls;
      visited_bytes = decltype(tag)::Format::kBlockBytes;
    }));
    EXPECT_EQ(calls, 1) << f.name;
    EXPECT_EQ(visited_bytes, f.block_bytes) << f.name;
  }
  EXPECT_FALSE(strata::visit_format(strata::GgmlType::Q8_K, [](auto) {}));
}

}  // namespace

#include "formats/ggml_type.hpp"

#include <array>
#include <cctype>

namespace strata {
namespace {

constexpr std::array kTypes = {
    GgmlTypeInfo{GgmlType::F32, "f32", 1, 4},
    GgmlTypeInfo{GgmlType::F16, "f16", 1, 2},
    GgmlTypeInfo{GgmlType::Q4_0, "q4_0", 32, 18},
    GgmlTypeInfo{GgmlType::Q4_1, "q4_1", 32, 20},
    GgmlTypeInfo{GgmlType::Q5_0, "q5_0", 32, 22},
    GgmlTypeInfo{GgmlType::Q5_1, "q5_1", 32, 24},
    GgmlTypeInfo{GgmlType::Q8_0, "q8_0", 32, 34},
    GgmlTypeInfo{GgmlType::Q8_1, "q8_1", 32, 36},
    GgmlTypeInfo{GgmlType::Q2_K, "q2_K", 256, 84},
    GgmlTypeInfo{GgmlType::Q3_K, "q3_K", 256, 110},
    GgmlTypeInfo{GgmlType::Q4_K, "q4_K", 256, 144},
    GgmlTypeInfo{GgmlType::Q5_K, "q5_K", 256, 176},
    GgmlTypeInfo{GgmlType::Q6_K, "q6_K", 256, 210},
    GgmlTypeInfo{GgmlType::Q8_K, "q8_K", 256, 292},
    GgmlTypeInfo{GgmlType::IQ2_XXS, "iq2_xxs", 256, 66},
    GgmlTypeInfo{GgmlType::IQ2_XS, "iq2_xs", 256, 74},
    GgmlTypeInfo{GgmlType::IQ3_XXS, "iq3_xxs", 256, 98},
    GgmlTypeInfo{GgmlType::IQ1_S, "iq1_s", 256, 50},
    GgmlTypeInfo{GgmlType::IQ4_NL, "iq4_nl", 32, 18},
    GgmlTypeInfo{GgmlType::IQ3_S, "iq3_s", 256, 110},
    GgmlTypeInfo{GgmlType::IQ2_S, "iq2_s", 256, 82},
    GgmlTypeInfo{GgmlType::IQ4_XS, "iq4_xs", 256, 136},
    GgmlTypeInfo{GgmlType::I8, "i8", 1, 1},
    GgmlTypeInfo{GgmlType::I16, "i16", 1, 2},
    GgmlTypeInfo{GgmlType::I32, "i32", 1, 4},
    GgmlTypeInfo{GgmlType::I64, "i64", 1, 8},
    GgmlTypeInfo{GgmlType::F64, "f64", 1, 8},
    GgmlTypeInfo{GgmlType::IQ1_M, "iq1_m", 256, 56},
    GgmlTypeInfo{GgmlType::BF16, "bf16", 1, 2},
    GgmlTypeInfo{GgmlType::TQ1_0, "tq1_0", 256, 54},
    GgmlTypeInfo{GgmlType::TQ2_0, "tq2_0", 256, 66},
    GgmlTypeInfo{GgmlType::MXFP4, "mxfp4", 32, 17},
    GgmlTypeInfo{GgmlType::NVFP4, "nvfp4", 64, 36},
    GgmlTypeInfo{GgmlType::Q1_0, "q1_0", 128, 18},
    GgmlTypeInfo{GgmlType::Q2_0, "q2_0", 64, 18},
};

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

}  // namespace

std::optional<GgmlTypeInfo> ggml_type_info(uint32_t id) {
  for (const auto& info : kTypes)
    if (static_cast<uint32_t>(info.type) == id) return info;
  return std::nullopt;
}

std::optional<GgmlTypeInfo> ggml_type_by_name(std::string_view name) {
  for (const auto& info : kTypes)
    if (equal_ignoring_case(info.name, name)) return info;
  return std::nullopt;
}

std::string_view ggml_type_name(GgmlType type) {
  const auto info = ggml_type_info(static_cast<uint32_t>(type));
  return info ? info->name : std::string_view("unknown");
}

}  // namespace strata

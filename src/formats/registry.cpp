#include "formats/registry.hpp"

#include <array>
#include <cctype>

namespace strata {
namespace {

template <class F>
constexpr FormatInfo make_info() {
  FormatInfo info{F::kType, F::kName, F::kBlockValues, F::kBlockBytes, F::kInt8, false, false,
                  &F::decode, nullptr, F::kWide, 0, 0, nullptr};
  if constexpr (F::kInt8) {
    info.split_scales = F::kSplitScales;
    info.has_offset = F::kHasOffset;
    info.decode_sub = &F::decode_sub;
  }
  if constexpr (F::kWide) {
    static_assert(WideBlockFormat<F>);
    info.wide_span = F::kWideSpan;
    info.wide_max = F::kWideMax;
    info.decode_wide = &F::decode_wide;
  }
  return info;
}

template <class... F>
constexpr auto make_table(FormatList<F...>) {
  return std::array<FormatInfo, sizeof...(F)>{make_info<F>()...};
}

constexpr auto kFormats = make_table(AllBlockFormats{});

}  // namespace

std::span<const FormatInfo> block_formats() { return kFormats; }

const FormatInfo* find_block_format(GgmlType type) {
  for (const auto& f : kFormats)
    if (f.type == type) return &f;
  return nullptr;
}

const FormatInfo* find_block_format(std::string_view name) {
  for (const auto& f : kFormats) {
    if (f.name.size() != name.size()) continue;
    bool same = true;
    for (size_t i = 0; i < name.size() && same; ++i)
      same = std::tolower(static_cast<unsigned char>(f.name[i])) ==
             std::tolower(static_cast<unsigned char>(name[i]));
    if (same) return &f;
  }
  return nullptr;
}

}  // namespace strata

// The one place that maps a run-time type id to a format traits type. Code that needs a
// format-specific path calls visit_format(type, fn): fn receives FormatTag<F>{} and is
// instantiated once per registered format (no per-path switch elsewhere).
#pragma once
#include <cstdint>
#include <span>
#include <string_view>

#include "formats/all.hpp"

namespace strata {

template <class F>
struct FormatTag {
  using Format = F;
};

// Every block format the library decodes, in ggml id order.
using AllBlockFormats = FormatList<STRATA_BLOCK_FORMATS>;

// Host-side description of a registered block format (for tools, validation and tests).
struct FormatInfo {
  GgmlType type;
  std::string_view name;
  int block_values;
  int block_bytes;
  bool int8;           // the int8 path carries it (decode_sub exists)
  bool split_scales;   // per-16 scales
  bool has_offset;     // offset/min term through activation sums
  void (*decode)(const uint8_t* block, float* out);
  void (*decode_sub)(const uint8_t* block, int sub, int8_t* q, SubScale& s);  // null unless int8
  bool wide;           // the q10 path carries it (decode_wide exists)
  int wide_span;       // S: values per span of the wide decode; 0 unless wide
  int wide_max;        // W_f: bound on |w|; 0 unless wide
  void (*decode_wide)(const uint8_t* block, int span, int16_t* w, WideScale& s);  // null unless wide
};

std::span<const FormatInfo> block_formats();
const FormatInfo* find_block_format(GgmlType type);       // null when not a block format we decode
const FormatInfo* find_block_format(std::string_view name);  // case-insensitive

namespace detail {
template <class Fn, class F, class... Rest>
bool visit_impl(GgmlType type, Fn& fn, FormatList<F, Rest...>) {
  if (type == F::kType) {
    fn(FormatTag<F>{});
    return true;
  }
  if constexpr (sizeof...(Rest) > 0) return visit_impl(type, fn, FormatList<Rest...>{});
  return false;
}
}  // namespace detail

// Calls fn(FormatTag<F>{}) for the format of `type` among `List`; false when none matches.
template <class List = AllBlockFormats, class Fn>
bool visit_format(GgmlType type, Fn&& fn) {
  return detail::visit_impl(type, fn, List{});
}

}  // namespace strata

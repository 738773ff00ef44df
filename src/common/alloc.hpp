// Allocations whose size comes from an option or a file: a failure names what was being
// allocated and how many bytes, instead of a bare std::bad_alloc.
#pragma once
#include <fmt/format.h>

#include <cstddef>
#include <limits>
#include <new>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "common/error.hpp"

namespace strata {

[[noreturn]] inline void fail_allocation(std::string_view what, size_t count, size_t elem_bytes) {
  if (count > std::numeric_limits<size_t>::max() / elem_bytes)
    fail(Status::kOutOfMemory, fmt::format("{}: {} elements of {} bytes overflow the address space",
                                           what, count, elem_bytes));
  const double bytes = static_cast<double>(count) * static_cast<double>(elem_bytes);
  fail(Status::kOutOfMemory, fmt::format("{}: cannot allocate {} bytes ({:.2f} GiB)", what,
                                         count * elem_bytes, bytes / double(1ull << 30)));
}

// v.resize(count) (value-initialised), or Error(kOutOfMemory) naming `what` and the bytes.
template <class T, class... Init>
void resize_or_fail(std::vector<T>& v, size_t count, std::string_view what, const Init&... init) {
  try {
    v.resize(count, init...);
  } catch (const std::bad_alloc&) {
    fail_allocation(what, count, sizeof(T));
  } catch (const std::length_error&) {
    fail_allocation(what, count, sizeof(T));
  }
}

template <class T, class... Init>
std::vector<T> allocate_or_fail(size_t count, std::string_view what, const Init&... init) {
  std::vector<T> v;
  resize_or_fail(v, count, what, init...);
  return v;
}

}  // namespace strata

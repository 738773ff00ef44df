// libFuzzer entry: any byte string through the GGUF parser and layer discovery. The only
// acceptable failure is a strata::Error; anything else (a crash, a sanitizer report, another
// exception escaping) is a finding.
#include <cstddef>
#include <cstdint>
#include <span>

#include "common/error.hpp"
#include "gguf/gguf.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto file = strata::gguf::File::parse(std::span<const uint8_t>(data, size), "fuzz");
    const auto layers = strata::gguf::discover_moe_layers(file);
    // Touch the first and last byte of every view so out-of-range pointers trip ASan.
    volatile uint8_t sink = 0;
    for (const auto& t : file.tensors())
      if (t.bytes > 0) sink = sink ^ t.data[0] ^ t.data[t.bytes - 1];
    for (const auto& l : layers) {
      for (const auto* e : {&l.weights.gate, &l.weights.up, &l.weights.down}) {
        const uint8_t* last = e->row(e->n_expert - 1, e->out_features - 1) + e->row_bytes - 1;
        sink = sink ^ e->data[0] ^ *last;
      }
    }
  } catch (const strata::Error&) {
  }
  return 0;
}

// The production grouped GEMM of every format in ProductionFormats (formats.hpp): the launch by
// run-time type instantiates each format's kernels here, so the list is the only registration.
#include <string>

#include "common/error.hpp"
#include "cuda/blocks/decoders.hpp"
#include "cuda/production/formats.hpp"
#include "cuda/production/grouped_gemm.hpp"
#include "cuda/production/grouped_gemm_kernel.cuh"
#include "formats/registry.hpp"

namespace strata::cuda::production {
namespace {

template <class... F>
std::string names_of(FormatList<F...>) {
  std::string names;
  ((names += (names.empty() ? "" : ", ") + std::string(F::kName)), ...);
  return names;
}

}  // namespace

void launch_grouped_gemm(GgmlType type, const blocks::ProductArgs& args, TileKind tile,
                         cudaStream_t stream) {
  const bool found = visit_format<ProductionFormats>(type, [&](auto tag) {
    launch_grouped_gemm<typename decltype(tag)::Format>(args, tile, stream);
  });
  require(found, Status::kInternal,
          "grouped GEMM: type " + std::string(ggml_type_name(type)) +
              " is not carried by the CUDA production arm");
}

bool carries(GgmlType type) {
  return visit_format<ProductionFormats>(type, [](auto) {});
}

std::string carried_format_names() {
  return names_of(ProductionFormats{});
}

}  // namespace strata::cuda::production

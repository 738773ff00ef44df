// The HIP build of the fused-wmma arm's kernels: the shared kernel source compiled for gfx1100
// (RDNA3, wave32), instantiated for the formats the CUDA build carries. The object check
// (cmake/hip_check.cmake) compiles this file device-only and looks for v_wmma_i32_16x16x16_iu8
// in its disassembly; a ROCm build (STRATA_MOE_HIP, docs/hip.md) compiles it with hipcc.
#include "hip/portability.hpp"  // NOTE: first: it defines what common/hd.hpp keys on

#include "cuda/fused_wmma/native_kernel_wmma.cuh"
#include "cuda/fused_wmma/tile_config.hpp"
#include "formats/iq3_s.hpp"
#include "formats/q2_0.hpp"

namespace strata::cuda::fused_wmma {

template __global__ void native_kernel_wmma<Iq3S, GateUpOp, ChainTileDefault>(const blocks::ProductArgs);
template __global__ void native_kernel_wmma<Q2_0, DownOp, ChainTileDefault>(const blocks::ProductArgs);

}  // namespace strata::cuda::fused_wmma

// The HIP build of the q10 wmma kernels: the shared kernel source (the 16x16x16 f16 tile
// primitive) compiled for gfx1100 (RDNA3, wave32), instantiated for the formats the CUDA build
// carries. The object check (cmake/hip_check.cmake) compiles this file device-only and looks for
// v_wmma_f32_16x16x16_f16 in its disassembly.
#include "hip/portability.hpp"  // NOTE: first: it defines what common/hd.hpp keys on

#include "cuda/fused_q10/wmma_q10_kernel.cuh"
#include "formats/iq3_s.hpp"
#include "formats/q2_0.hpp"

namespace strata::cuda::fused_q10 {

template __global__ void wmma_q10_kernel<Iq3S, GateUpOp, WmmaQ10TileDefault>(const WmmaQ10Args);
template __global__ void wmma_q10_kernel<Q2_0, DownOp, WmmaQ10TileDefault>(const WmmaQ10Args);

}  // namespace strata::cuda::fused_q10

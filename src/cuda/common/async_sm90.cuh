// sm_90 PTX wrappers: shared-memory mbarriers with transaction counts, the bulk copy engine
// (cp.async.bulk global -> shared, completing on an mbarrier) and its tensor-map boxes (TMA), the
// generic -> async proxy fence, named barriers and setmaxnreg. Builds for older targets get trapping
// bodies: the host launches the kernels that use them only on sm_90a images.
#pragma once
#include <cstdint>

#include "cuda/common/ptx.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define STRATA_SM90_ASYNC 1
#else
#define STRATA_SM90_ASYNC 0
#endif

namespace strata::cuda {

__device__ __forceinline__ void mbarrier_init(uint64_t* bar, uint32_t arrivals) {
#if STRATA_SM90_ASYNC
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(bar)), "r"(arrivals) : "memory");
#else
  (void)bar;
  (void)arrivals;
  __trap();
#endif
}

// Makes the initialised barriers visible to the async proxy (the bulk copy engine).
__device__ __forceinline__ void mbarrier_init_fence() {
#if STRATA_SM90_ASYNC
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}

// The stage ring of a producer/consumer pipeline: thread 0 initialises each stage's `full`
// mbarrier (one arrival per producer thread, plus the bulk bytes) and `empty` mbarrier (one per
// consumer thread); the caller then synchronises the block before any use.
template <int Stages>
__device__ __forceinline__ void init_stage_ring(uint64_t (&full)[Stages], uint64_t (&empty)[Stages],
                                                uint32_t producer_threads, uint32_t consumer_threads) {
  if (threadIdx.x != 0) return;
  for (int s = 0; s < Stages; ++s) {
    mbarrier_init(&full[s], producer_threads);
    mbarrier_init(&empty[s], consumer_threads);
  }
  mbarrier_init_fence();
}

__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) {
#if STRATA_SM90_ASYNC
  asm volatile("{\n.reg .b64 state;\nmbarrier.arrive.shared::cta.b64 state, [%0];\n}\n" ::"r"(shared_address(bar))
               : "memory");
#else
  (void)bar;
#endif
}

// One arrival that also announces `bytes` more of bulk copies completing on this barrier.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
#if STRATA_SM90_ASYNC
  asm volatile("{\n.reg .b64 state;\nmbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1;\n}\n" ::"r"(
                   shared_address(bar)),
               "r"(bytes)
               : "memory");
#else
  (void)bar;
  (void)bytes;
#endif
}

// The longest a waiting thread stays suspended in one try_wait (ns) before it tests again; it
// resumes as soon as the phase completes. On sm_90a ptxas makes the retry loop TRYWAIT,
// NANOSLEEP.SYNCS, PHASECHK. Against the hardware's own limit (no hint) the q10 Hopper kernels
// measured the same within 1 % (bench/results/2026-12-06.md, calls 33 and 37).
inline constexpr uint32_t kMbarrierSuspendNs = 1000000;

// Blocks until the barrier's phase with the given parity has completed.
__device__ __forceinline__ void mbarrier_wait(uint64_t* bar, uint32_t parity) {
#if STRATA_SM90_ASYNC
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "wait_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1, %2;\n"
      "@!done bra wait_%=;\n"
      "}\n" ::"r"(shared_address(bar)),
      "r"(parity), "r"(kMbarrierSuspendNs)
      : "memory");
#else
  (void)bar;
  (void)parity;
#endif
}

// Bulk copy of `bytes` (a multiple of 16; both addresses 16-byte aligned) from global to shared
// memory; its completion is counted as transactions on `bar`.
__device__ __forceinline__ void bulk_copy_g2s(void* dst_shared, const void* src_global, uint32_t bytes, uint64_t* bar) {
#if STRATA_SM90_ASYNC
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
          shared_address(dst_shared)),
      "l"(src_global), "r"(bytes), "r"(shared_address(bar))
      : "memory");
#else
  (void)dst_shared;
  (void)src_global;
  (void)bytes;
  (void)bar;
  __trap();
#endif
}

// One box of a 3-d tensor map (cuda/common/tensor_map.hpp) from global to shared memory (128-byte
// aligned), at element coordinates (x, y, z); its bytes, the whole box with the zeros of any part
// outside the tensor, are counted as transactions on `bar`. `map` is the descriptor's address in
// kernel parameter space (a __grid_constant__ argument).
__device__ __forceinline__ void tma_load_3d(void* dst_shared, const void* map, int x, int y, int z, uint64_t* bar) {
#if STRATA_SM90_ASYNC
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
      "[%5];\n" ::"r"(shared_address(dst_shared)),
      "l"(map), "r"(x), "r"(y), "r"(z), "r"(shared_address(bar))
      : "memory");
#else
  (void)dst_shared;
  (void)map;
  (void)x;
  (void)y;
  (void)z;
  (void)bar;
  __trap();
#endif
}

// Orders this thread's earlier ordinary shared-memory writes before later async-proxy reads
// (wgmma operands, bulk copies).
__device__ __forceinline__ void fence_proxy_async_shared() {
#if STRATA_SM90_ASYNC
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

// bar.sync on a named barrier among `threads` threads (a multiple of 32).
__device__ __forceinline__ void named_barrier_sync(uint32_t id, uint32_t threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// Register budget of the executing warpgroup (sm_90a; all its warps must execute the same call).
template <uint32_t Registers>
__device__ __forceinline__ void setmaxnreg_increase() {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(Registers));
#endif
}

template <uint32_t Registers>
__device__ __forceinline__ void setmaxnreg_decrease() {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(Registers));
#endif
}

}  // namespace strata::cuda

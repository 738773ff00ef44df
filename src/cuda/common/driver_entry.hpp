// CUDA driver functions looked up through the runtime (cudaGetDriverEntryPointByVersion), so
// nothing links the driver library itself.
#pragma once

namespace strata::cuda {

// The driver's `symbol` as of the 12.0 ABI, or null where this driver does not have it (the
// runtime's error for the lookup is cleared: a missing entry point is an answer, not a sticky
// error).
void* driver_entry_point(const char* symbol);

}  // namespace strata::cuda

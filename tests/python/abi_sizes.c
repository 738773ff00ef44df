/* Prints the C API structs' sizes and field offsets as the C compiler lays them out, for the
 * Python package's ctypes mirror to be checked against. */
#include <stddef.h>
#include <stdio.h>

#include "strata_moe.h"

#define FIELD(type, field) printf("%s.%s %zu\n", #type, #field, offsetof(type, field))

int main(void) {
  printf("strata_moe_tensor_desc %zu\n", sizeof(strata_moe_tensor_desc));
  printf("strata_moe_layer_desc %zu\n", sizeof(strata_moe_layer_desc));
  printf("strata_moe_run_options %zu\n", sizeof(strata_moe_run_options));
  printf("strata_moe_run_args %zu\n", sizeof(strata_moe_run_args));
  printf("strata_moe_gguf_layer %zu\n", sizeof(strata_moe_gguf_layer));
  FIELD(strata_moe_tensor_desc, data);
  FIELD(strata_moe_tensor_desc, expert_stride_bytes);
  FIELD(strata_moe_tensor_desc, name);
  FIELD(strata_moe_layer_desc, gate);
  FIELD(strata_moe_layer_desc, down);
  FIELD(strata_moe_run_options, cuda_stream);
  FIELD(strata_moe_run_options, numerics);
  FIELD(strata_moe_run_args, x_dtype);
  FIELD(strata_moe_run_args, y);
  FIELD(strata_moe_run_args, n_tokens);
  FIELD(strata_moe_run_args, k);
  FIELD(strata_moe_run_args, workspace);
  FIELD(strata_moe_run_args, options);
  FIELD(strata_moe_gguf_layer, desc);
  FIELD(strata_moe_gguf_layer, router);
  FIELD(strata_moe_gguf_layer, n_expert_used);
  return 0;
}

/* strata-moe from C: one MoE layer of a GGUF file, routed by its router, run with bf16
 * activations and a caller-sized workspace.  Usage: example_c MODEL.gguf */
#include <stdio.h>
#include <stdlib.h>
#include <strata_moe.h>

static int check(strata_moe_status status) {
  if (status != STRATA_MOE_OK) fprintf(stderr, "strata_moe: %s\n", strata_moe_last_error());
  return status == STRATA_MOE_OK;
}

static uint16_t to_bf16(float v) { /* round to nearest even (finite values) */
  union { float f; uint32_t u; } c = {v};
  return (uint16_t)((c.u + 0x7fffu + ((c.u >> 16) & 1u)) >> 16);
}

int main(int argc, char** argv) {
  if (argc != 2) return fprintf(stderr, "usage: %s MODEL.gguf\n", argv[0]), 2;
  printf("strata_moe %s (%s)\n", strata_moe_version(), strata_moe_git_commit());
  strata_moe_gguf* file = NULL;
  strata_moe_gguf_layer info = {.struct_size = sizeof info};
  strata_moe_layer* layer = NULL;
  if (!check(strata_moe_gguf_open(argv[1], &file)) || !check(strata_moe_gguf_layer_info(file, 0, &info)) ||
      !check(strata_moe_layer_create(STRATA_MOE_BACKEND_CPU, &info.desc, &layer)))
    return 1;

  const int64_t T = 8, d = info.desc.d;
  const int k = info.n_expert_used;
  float* x = malloc(sizeof(float) * T * d);
  uint16_t* x_bf16 = malloc(sizeof(uint16_t) * T * d);
  float* y = malloc(sizeof(float) * T * d);
  int32_t* ids = malloc(sizeof(int32_t) * T * k);
  float* weights = malloc(sizeof(float) * T * k);
  for (int64_t i = 0; i < T * d; ++i) x[i] = (float)((i * 7919) % 211) / 105.0f - 1.0f;
  for (int64_t i = 0; i < T * d; ++i) x_bf16[i] = to_bf16(x[i]);
  if (!check(strata_moe_route(info.router, x, T, d, info.desc.n_expert, k, STRATA_MOE_GATING_SOFTMAX_TOPK_RENORM,
                              ids, weights, 0)))
    return 1;

  strata_moe_run_options options;
  strata_moe_run_options_init(&options);
  options.numerics = STRATA_MOE_NUMERICS_Q8;
  strata_moe_run_args args;
  strata_moe_run_args_init(&args);
  args.x = x_bf16;
  args.x_dtype = STRATA_MOE_DTYPE_BF16;
  args.ids = ids;
  args.weights = weights;
  args.y = y;
  args.n_tokens = T;
  args.k = k;
  args.options = &options;
  if (!check(strata_moe_workspace_bytes(layer, &args, &args.workspace_bytes))) return 1;
  args.workspace = aligned_alloc(256, (args.workspace_bytes + 255) / 256 * 256);
  if (!check(strata_moe_layer_run_ex(layer, &args))) return 1;

  double sum = 0;
  for (int64_t i = 0; i < T * d; ++i) sum += y[i];
  printf("layer %d: %lld tokens, k=%d, workspace %zu bytes, sum(y) = %.6f\n", info.layer, (long long)T, k,
         args.workspace_bytes, sum);
  free(args.workspace);
  free(x), free(x_bf16), free(y), free(ids), free(weights);
  strata_moe_layer_destroy(layer);
  strata_moe_gguf_close(file);
  return 0;
}

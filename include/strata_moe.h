/* strata-moe C API: one quantised mixture-of-experts expert layer (gate/up/down in GGUF block
 * formats) on the CPU or a CUDA device. Framework-agnostic: raw pointers and a stream.
 *
 * Errors: every function returning strata_moe_status leaves a message naming the argument and the
 * reason in strata_moe_last_error() (thread-local, valid until the thread's next failing call).
 * No C++ exception ever crosses this boundary. */
#ifndef STRATA_MOE_H
#define STRATA_MOE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Values equal strata::Status. */
typedef enum strata_moe_status {
  STRATA_MOE_OK = 0,
  STRATA_MOE_INVALID_ARGUMENT = 1, /* a caller's argument is wrong (shape, range, null pointer) */
  STRATA_MOE_BAD_FILE = 2,
  STRATA_MOE_UNSUPPORTED = 3, /* a format, geometry or backend this build does not cover */
  STRATA_MOE_IO = 4,
  STRATA_MOE_CUDA = 5,
  STRATA_MOE_OUT_OF_MEMORY = 6,
  STRATA_MOE_INTERNAL = 7
} strata_moe_status;

typedef enum strata_moe_backend {
  STRATA_MOE_BACKEND_CPU = 0,  /* host pointers; the call returns when y is written */
  STRATA_MOE_BACKEND_CUDA = 1  /* device pointers (weights too); asynchronous on the stream */
} strata_moe_backend;

/* The arms: every arm of a profile gives that profile's bits; they differ in speed and in the
 * formats and geometries they carry (`strata-moe support` prints the matrix). A requested arm that
 * does not carry a layer falls back to one that does; the run report says which ran and why. */
typedef enum strata_moe_arm {
  STRATA_MOE_ARM_DEFAULT = 0,      /* the environment (STRATA_PF_FUSED=1: fused, ...; docs/api.md),
                                      else the backend's default arm of the profile */
  STRATA_MOE_ARM_PRODUCTION = 1,   /* stage by stage (CPU, CUDA) */
  STRATA_MOE_ARM_FUSED = 2,        /* the backend's fused kernels: CPU fused; CUDA fused-hopper
                                      where it runs, else fused-sm80 */
  STRATA_MOE_ARM_FUSED_SM80 = 3,   /* CUDA: mma.sync kernels (sm_80 and later) */
  STRATA_MOE_ARM_FUSED_HOPPER = 4, /* CUDA: bulk copies + wgmma (sm_90 with the build's sm_90a image) */
  STRATA_MOE_ARM_FUSED_WMMA = 5    /* CUDA: the 16x16x16 tile primitive */
} strata_moe_arm;

/* The numerics profile: one arithmetic contract each (docs/numerics.md). Every backend and arm of a
 * profile gives the same bits; the two profiles give different (q10: about 3x more accurate) bits. */
typedef enum strata_moe_numerics {
  STRATA_MOE_NUMERICS_DEFAULT = 0, /* the environment (STRATA_NUMERICS=q8|q10), else q10 where the
                                      backend has a q10 arm for the layer (the named arm's, when
                                      one is named), else q8 */
  STRATA_MOE_NUMERICS_Q8 = 1,      /* int8 codes per 32 values, fp32 fold per 32-wide slice */
  STRATA_MOE_NUMERICS_Q10 = 2      /* int10 codes per 64 values, wide integer weights, fold per span */
} strata_moe_numerics;

typedef enum strata_moe_gating {
  STRATA_MOE_GATING_SOFTMAX_TOPK_RENORM = 0, /* softmax over E, top-k, renormalised (qwen3moe) */
  STRATA_MOE_GATING_SOFTMAX_TOPK = 1,        /* softmax over E, top-k */
  STRATA_MOE_GATING_TOPK_SOFTMAX = 2         /* top-k of the logits, softmax over the k */
} strata_moe_gating;

/* One stacked expert tensor as GGUF stores it: ne = [ne0 values per row, ne1 rows, ne2 experts]. */
typedef struct strata_moe_tensor_desc {
  uint32_t ggml_type;          /* ggml type id (IQ3_S = 21, Q2_0 = 42, ...) */
  const void* data;            /* first row of expert 0; 2-byte alignment is enough */
  int64_t ne0, ne1, ne2;
  size_t expert_stride_bytes;  /* bytes from expert e to e+1; 0 = contiguous */
  const char* name;            /* for messages; may be NULL */
} strata_moe_tensor_desc;

/* gate, up: [d, f, E]; down: [f, d, E]. */
typedef struct strata_moe_layer_desc {
  int64_t d, f, n_expert;
  strata_moe_tensor_desc gate, up, down;
} strata_moe_layer_desc;

/* What a run did. Extensible like strata_moe_run_options: set struct_size to
 * sizeof(strata_moe_run_report); the library writes only the fields struct_size covers. */
typedef struct strata_moe_run_report {
  size_t struct_size;            /* sizeof(strata_moe_run_report) */
  strata_moe_arm arm;            /* the arm that ran (on CUDA a kernel family: FUSED_HOPPER, ...) */
  strata_moe_numerics numerics;  /* the profile that ran: Q8 or Q10 */
  char fallback[512];            /* "" when the requested arm ran, else why it did not (cut to fit) */
} strata_moe_run_report;

/* Extensible: set struct_size to sizeof(strata_moe_run_options) (strata_moe_run_options_init does, and
 * sets every field to its default). The library reads only the fields struct_size covers, so a
 * caller built against an older header keeps working when fields are appended. */
typedef struct strata_moe_run_options {
  size_t struct_size;            /* sizeof(strata_moe_run_options) */
  strata_moe_arm arm;            /* STRATA_MOE_ARM_DEFAULT: see strata_moe_arm */
  int threads;                   /* CPU threads; <= 0: the OpenMP default */
  void* cuda_stream;             /* cudaStream_t for the CUDA backend; NULL = the default stream */
  strata_moe_numerics numerics;  /* STRATA_MOE_NUMERICS_DEFAULT: see strata_moe_numerics */
  strata_moe_run_report* report; /* NULL, or filled by a successful run (a block run: its routed
                                    experts' layer) */
} strata_moe_run_options;

/* "default", "production", "fused", "fused-sm80", "fused-hopper", "fused-wmma"; NULL for a value
 * that is not an arm. */
const char* strata_moe_arm_name(strata_moe_arm arm);

/* Every field to its default, struct_size to sizeof(strata_moe_run_options). */
void strata_moe_run_options_init(strata_moe_run_options* options);

typedef struct strata_moe_layer strata_moe_layer;

const char* strata_moe_last_error(void);

/* Validates the descriptor and builds a layer. The weights are not copied: they must outlive the
 * layer. A CPU layer's weights are scanned once for non-finite block scales (see
 * strata_moe_check_weights). A layer may be run from several threads at once: CPU runs proceed in
 * parallel; CUDA runs take turns, and a run on another stream waits for the previous run to end. */
strata_moe_status strata_moe_layer_create(strata_moe_backend backend, const strata_moe_layer_desc* desc,
                                          strata_moe_layer** layer);

/* y[t] = sum_j weights[t, j] * expert_{ids[t, j]}(x[t]).  x: [T, d] f32, ids: [T, k] int32 (distinct
 * per token, in [0, E)), weights: [T, k] f32 (finite, >= 0), y: [T, d] f32, all 4-byte aligned.
 * 1 <= T <= 2^28, 1 <= k <= min(E, 64), T*k < 2^31, T*d <= 2^34; options->threads <= 1024.
 * options may be NULL (all defaults). A profile the backend has no arm for (see `strata-moe support`)
 * is refused with STRATA_MOE_UNSUPPORTED, never run in another profile; a default profile is chosen
 * per layer (strata_moe_numerics) and options->report says which ran. On a CPU layer, a y that
 * overflows float32 from finite inputs (an element Inf or NaN) is STRATA_MOE_INVALID_ARGUMENT,
 * naming the element; a CUDA layer's y is device memory, written asynchronously, and not scanned. */
strata_moe_status strata_moe_layer_run(strata_moe_layer* layer, const float* x, const int32_t* ids,
                                       const float* weights, int64_t n_tokens, int k, float* y,
                                       const strata_moe_run_options* options);

/* NULL is a no-op. */
void strata_moe_layer_destroy(strata_moe_layer* layer);

/* Scans the weights of a descriptor in HOST memory for non-finite block scales (NaN or Inf in any
 * sub-block's scale or offset), as strata_moe_layer_create does for a CPU layer; for a CUDA layer,
 * call it on the host copy before the upload. STRATA_MOE_INVALID_ARGUMENT names the tensor, expert,
 * row and block of the first bad one. About one pass over the weights. */
strata_moe_status strata_moe_check_weights(const strata_moe_layer_desc* desc);

/* Router on the host: router [E, d] f32 (GGUF ffn_gate_inp), x [T, d] -> ids, weights [T, k]. */
strata_moe_status strata_moe_route(const float* router, const float* x, int64_t n_tokens, int64_t d,
                                   int64_t n_expert, int k, strata_moe_gating gating, int32_t* ids,
                                   float* weights, int threads);

/* ---- whole MoE blocks: routing, routed experts with biases/activation, shared experts ---- */

typedef enum strata_moe_score_func {
  STRATA_MOE_SCORE_SOFTMAX = 0,          /* softmax over E (expert_gating_func 1) */
  STRATA_MOE_SCORE_SIGMOID = 1,          /* sigmoid per expert (2; DeepSeek V3, GLM-4.5) */
  STRATA_MOE_SCORE_SOFTMAX_SELECTED = 2  /* top-k of the logits, softmax over the k (3; gpt-oss) */
} strata_moe_score_func;

typedef enum strata_moe_activation {
  STRATA_MOE_ACTIVATION_SWIGLU = 0,     /* silu(g) * u */
  STRATA_MOE_ACTIVATION_SWIGLU_OAI = 1  /* min(g,L) sigmoid(alpha min(g,L)) (clamp(u,-L,L) + 1) */
} strata_moe_activation;

/* The router and its rule, in llama.cpp's order: logits (+ logit_bias) -> scores -> selection
 * scores (+ selection_bias) -> keep n_group_used of n_group groups (by the sum of their top-2) ->
 * top-k (ties to the lower id) -> weights = scores of the chosen (softmax over them for
 * SOFTMAX_SELECTED) -> / max(sum, 2^-14) when normalize -> * scale when scale is not 0 or 1. */
typedef struct strata_moe_routing_desc {
  const float* router;          /* [E, d] f32 (GGUF ffn_gate_inp); NULL: the caller passes ids */
  int k;                        /* experts per token */
  strata_moe_score_func score;
  int normalize;
  float scale;
  int n_group, n_group_used;    /* 0 or 1: no groups */
  const float* logit_bias;      /* [E] or NULL (gpt-oss ffn_gate_inp.bias) */
  const float* selection_bias;  /* [E] or NULL (exp_probs_b: chooses, does not weigh) */
} strata_moe_routing_desc;

/* A dense SwiGLU FFN every token visits: an E = 1 layer (ne2 = 1). gate: [d] f32 scales its
 * output by sigmoid(gate . x) (qwen3next, qwen35moe); NULL adds it unscaled (deepseek2). */
typedef struct strata_moe_shared_expert_desc {
  strata_moe_layer_desc ffn;
  const float* gate;
} strata_moe_shared_expert_desc;

typedef struct strata_moe_block_desc {
  strata_moe_layer_desc routed;
  const float* gate_bias;  /* [E, f] f32 or NULL, added after the gate product */
  const float* up_bias;    /* [E, f] f32 or NULL */
  const float* down_bias;  /* [E, d] f32 or NULL */
  strata_moe_activation activation;
  float activation_alpha, activation_limit; /* SWIGLU_OAI; 0: llama.cpp's 1.702 and 7 */
  strata_moe_routing_desc routing;
  const strata_moe_shared_expert_desc* shared; /* n_shared of them, combined after the k slots */
  int n_shared;
} strata_moe_block_desc;

typedef struct strata_moe_block strata_moe_block;

/* Host memory on both backends (the CUDA backend copies the weights once). The CUDA arms carry
 * plain SwiGLU experts only: biases or SWIGLU_OAI on CUDA give STRATA_MOE_UNSUPPORTED. */
strata_moe_status strata_moe_block_create(strata_moe_backend backend, const strata_moe_block_desc* desc,
                                          strata_moe_block** block);

/* x: [T, d]; ids/weights: [T, k] or both NULL to route with the block's router; y: [T, d];
 * ids_out/weights_out ([T, k], may be NULL) receive the routing used. Host pointers. A y that
 * overflows float32 is STRATA_MOE_INVALID_ARGUMENT, as in strata_moe_layer_run. */
strata_moe_status strata_moe_block_run(strata_moe_block* block, const float* x, int64_t n_tokens,
                                       const int32_t* ids, const float* weights, float* y,
                                       int32_t* ids_out, float* weights_out,
                                       const strata_moe_run_options* options);

void strata_moe_block_destroy(strata_moe_block* block);

/* CUDA devices visible to this build (0 when built without CUDA). */
int strata_moe_cuda_device_count(void);

/* ---- engines: 16-bit activations, int64 ids, a caller-owned workspace ------------------------ */

/* Element types of the strata_moe_run_args arrays. */
typedef enum strata_moe_dtype {
  STRATA_MOE_DTYPE_F32 = 0,
  STRATA_MOE_DTYPE_F16 = 1,  /* IEEE binary16 */
  STRATA_MOE_DTYPE_BF16 = 2, /* bfloat16: the top 16 bits of an f32 */
  STRATA_MOE_DTYPE_I32 = 3,
  STRATA_MOE_DTYPE_I64 = 4
} strata_moe_dtype;

/* One layer run with typed arrays. Extensible like strata_moe_run_options: set struct_size (or call
 * strata_moe_run_args_init); fields appended later are read only when struct_size covers them.
 *
 * x, weights: f32, f16 or bf16; y: f32, f16 or bf16 (any mix); ids: i32 or i64. All row-major and
 * contiguous: x and y [n_tokens, d], ids and weights [n_tokens, k]. f16/bf16 inputs are widened to
 * f32 exactly; i64 ids must lie in [0, E) like i32 ones. The layer computes y in f32 and a 16-bit y
 * is that f32 rounded to nearest, ties to even (overflow to +-inf): the f32 result's bits decide
 * the 16-bit bits, so every arm and backend gives the same 16-bit output too.
 *
 * workspace: workspace_bytes bytes from strata_moe_workspace_bytes (host memory for the CPU
 * backend, device memory for CUDA), 256-byte aligned, not touched by anyone else until the run is
 * over (on CUDA: until the stream has passed it). With it, a CUDA q8 run allocates nothing, never
 * synchronises and only enqueues work on the stream, so it can be captured in a CUDA graph (a q10
 * run still takes its pipeline buffers from the layer in this version). NULL:
 * the library uses its own buffers, grown on demand (a CUDA run that grows them allocates and
 * synchronises; one layer's runs then take turns). */
typedef struct strata_moe_run_args {
  size_t struct_size;                 /* sizeof(strata_moe_run_args) */
  const void* x;                      /* [n_tokens, d] */
  strata_moe_dtype x_dtype;
  const void* ids;                    /* [n_tokens, k] expert ids, distinct per token */
  strata_moe_dtype ids_dtype;
  const void* weights;                /* [n_tokens, k] finite, >= 0 */
  strata_moe_dtype weights_dtype;
  void* y;                            /* [n_tokens, d] */
  strata_moe_dtype y_dtype;
  int64_t n_tokens;
  int k;
  void* workspace;                    /* NULL, or workspace_bytes of scratch */
  size_t workspace_bytes;
  const strata_moe_run_options* options; /* NULL: every default */
} strata_moe_run_args;

/* Every field to its default: NULL arrays, f32 x/weights/y, i32 ids, no workspace. */
void strata_moe_run_args_init(strata_moe_run_args* args);

/* The workspace a run of `args` needs (its dtypes, n_tokens and k; the arrays and the workspace
 * fields are not read), in *bytes: with args->options, for the arm and profile those options choose
 * (run with the same options); with NULL options, enough for a run on any arm in either profile.
 * The same for every run with the same dtypes, n_tokens, k (and options); a workspace sized for
 * n_tokens serves every smaller n_tokens too. */
strata_moe_status strata_moe_workspace_bytes(const strata_moe_layer* layer, const strata_moe_run_args* args,
                                             size_t* bytes);

/* y from x, ids, weights as strata_moe_layer_run does (bitwise the same y for f32 arrays). */
strata_moe_status strata_moe_layer_run_ex(strata_moe_layer* layer, const strata_moe_run_args* args);

/* The backend a layer was created on. */
strata_moe_backend strata_moe_layer_backend(const strata_moe_layer* layer);

/* Bytes from a tensor's first block to the end of its last expert's last row: what a copy of the
 * tensor to the device must cover. */
strata_moe_status strata_moe_tensor_span_bytes(const strata_moe_tensor_desc* tensor, size_t* bytes);

/* ---- GGUF files ------------------------------------------------------------------------------ */

/* A model file mapped read-only; the descriptors it gives point into the mapping and stay valid
 * until strata_moe_gguf_close. */
typedef struct strata_moe_gguf strata_moe_gguf;

typedef struct strata_moe_gguf_layer {
  size_t struct_size;          /* sizeof(strata_moe_gguf_layer) */
  int layer;                   /* blk.N */
  strata_moe_layer_desc desc;  /* the expert tensors, host pointers into the mapping */
  const float* router;         /* [E, d] f32 (ffn_gate_inp), NULL when the file has none */
  int n_expert_used;           /* {arch}.expert_used_count, 0 when absent */
} strata_moe_gguf_layer;

strata_moe_status strata_moe_gguf_open(const char* path, strata_moe_gguf** file);
void strata_moe_gguf_close(strata_moe_gguf* file);
/* The MoE layers' numbers (blk.N), in order: *count of them; up to `capacity` written to `layers`
 * (which may be NULL when capacity is 0). */
strata_moe_status strata_moe_gguf_moe_layers(const strata_moe_gguf* file, int* layers, int capacity, int* count);
/* Layer blk.`layer` (set out->struct_size first). */
strata_moe_status strata_moe_gguf_layer_info(const strata_moe_gguf* file, int layer, strata_moe_gguf_layer* out);

/* ---- version --------------------------------------------------------------------------------- */

/* "MAJOR.MINOR.PATCH" of the library that is linked (not of the header). */
const char* strata_moe_version(void);
/* The library source tree's git commit at configure time (40 hex digits), or "" when unknown. */
const char* strata_moe_git_commit(void);

#define STRATA_MOE_VERSION_MAJOR 0
#define STRATA_MOE_VERSION_MINOR 1
#define STRATA_MOE_VERSION_PATCH 0

#ifdef __cplusplus
}
#endif

#endif /* STRATA_MOE_H */

// The benchmark cells of GPU.md on the CUDA production arm: per geometry, chunk size and routing,
// µs per layer (median of CUDA-event-timed runs after warm-up, inputs rotated over several sets),
// per-phase µs, effective TOPS = 2*T*k*3*d*f / time, the fraction of the 1295 TOPS mma.sync
// ceiling, GB/s of the routed experts' weight bytes, and ggml's figure from GPU.md with the ratio.
//
//   strata-moe-gpu-cells [out.json] [--quick]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cuda/backend/run_layer.hpp"
#include "cuda/common/check.hpp"
#include "cuda/common/device_buffer.hpp"
#include "cuda/synth/random_blocks.hpp"
#include "formats/ggml_type.hpp"
#include "pipeline/layer.hpp"
#include "synth/synth.hpp"

namespace {

using namespace strata;

constexpr double kMmaSyncCeilingTops = 1295.0;  // GPU.md, int8 mma.sync m16n8k32 on the H200
constexpr int kWarmup = 3;
constexpr int kRuns = 25;
constexpr int kInputSets = 3;

struct Geometry {
  const char* name;
  int64_t d, f, n_expert;
  int k;
};

// ggml MUL_MAT_ID on the same H200, uniform routing, µs per layer (GPU.md); 0 where none.
double ggml_layer_us(const std::string& name, int64_t T) {
  if (name == "qwen35-a3b") return T == 512 ? 1330 : T == 4096 ? 3621 : T == 16384 ? 12680 : 0;
  if (name == "qwen3-30b") return T == 4096 ? 3453 : 0;
  if (name == "flash-next") return T == 512 ? 4393 : T == 4096 ? 10990 : T == 16384 ? 48855 : 0;
  return 0;
}

struct DeviceTensorStore {
  cuda::DeviceBuffer<uint8_t> bytes;
  ExpertTensor view;
};

DeviceTensorStore make_device_tensor(const char* name, GgmlType type, int64_t in, int64_t out, int64_t E,
                                     uint64_t seed) {
  DeviceTensorStore t;
  const auto info = ggml_type_info(static_cast<uint32_t>(type));
  const size_t n_blocks = static_cast<size_t>(in / info->block_values) * out * E;
  t.bytes.reserve(n_blocks * info->block_bytes + 2);
  cuda::launch_random_blocks(t.bytes.get() + 2, n_blocks, info->block_bytes, seed, nullptr);  // 2-byte aligned
  t.view = make_expert_tensor(name, type, t.bytes.get() + 2, in, out, E);
  return t;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const char* json_path = nullptr;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    else json_path = argv[i];
  }
  try {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
      std::printf("strata-moe-gpu-cells: no CUDA device\n");
      return 0;
    }
    cudaDeviceProp prop{};
    STRATA_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device: %s, %d SMs, L2 %d MB\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20);

    const Geometry geometries[] = {{"qwen35-a3b", 2048, 512, 256, 8},
                                   {"qwen3-30b", 2048, 768, 128, 8},
                                   {"flash-next", 2560, 640, 512, 10}};
    std::vector<int64_t> chunks = {512, 4096, 16384};
    if (quick) chunks = {512, 4096};

    std::string json = "{\n  \"device\": \"" + std::string(prop.name) + "\",\n  \"cells\": [\n";
    std::vector<std::string> table;
    bool first_cell = true;
    for (const Geometry& g : geometries) {
      DeviceTensorStore gate = make_device_tensor("gate", GgmlType::IQ3_S, g.d, g.f, g.n_expert, 11);
      DeviceTensorStore up = make_device_tensor("up", GgmlType::IQ3_S, g.d, g.f, g.n_expert, 12);
      DeviceTensorStore down = make_device_tensor("down", GgmlType::Q2_0, g.f, g.d, g.n_expert, 13);
      MoeLayerWeights layer;
      layer.d = g.d;
      layer.f = g.f;
      layer.n_expert = g.n_expert;
      layer.gate = gate.view;
      layer.up = up.view;
      layer.down = down.view;
      const double expert_bytes = static_cast<double>(2 * gate.view.expert_stride_bytes + down.view.expert_stride_bytes);

      const int64_t t_max = chunks.back();
      const int64_t x_shift = 64;  // rows between input sets
      const std::vector<float> x_all = synth::random_activations(t_max + kInputSets * x_shift, g.d, 7);
      cuda::DeviceBuffer<float> d_x(x_all.size());
      STRATA_CUDA_CHECK(cudaMemcpy(d_x.get(), x_all.data(), x_all.size() * sizeof(float), cudaMemcpyHostToDevice));
      cuda::DeviceBuffer<float> d_y(static_cast<size_t>(t_max * g.d));
      cuda::Workspace ws;
      cudaStream_t stream = nullptr;
      STRATA_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      cudaEvent_t start, stop;
      STRATA_CUDA_CHECK(cudaEventCreate(&start));
      STRATA_CUDA_CHECK(cudaEventCreate(&stop));

      for (const int64_t T : chunks) {
        for (const bool uniform : {false, true}) {
          // ---- inputs: kInputSets routings and x windows ----------------------------------
          std::vector<cuda::DeviceBuffer<int32_t>> ids(kInputSets);
          std::vector<cuda::DeviceBuffer<float>> wts(kInputSets);
          double touched_bytes = 0;
          for (int s = 0; s < kInputSets; ++s) {
            const uint64_t seed = 1000 + 17 * s + T;
            const synth::Routing r = uniform ? synth::uniform_routing(T, g.n_expert, g.k, seed)
                                             : synth::skewed_routing(T, g.n_expert, g.k, seed);
            ids[s].reserve(r.ids.size());
            wts[s].reserve(r.weights.size());
            STRATA_CUDA_CHECK(cudaMemcpy(ids[s].get(), r.ids.data(), r.ids.size() * 4, cudaMemcpyHostToDevice));
            STRATA_CUDA_CHECK(cudaMemcpy(wts[s].get(), r.weights.data(), r.weights.size() * 4, cudaMemcpyHostToDevice));
            std::vector<char> used(static_cast<size_t>(g.n_expert), 0);
            for (int32_t e : r.ids) used[static_cast<size_t>(e)] = 1;
            touched_bytes += static_cast<double>(std::count(used.begin(), used.end(), 1)) * expert_bytes;
          }
          touched_bytes /= kInputSets;
          auto inputs = [&](int s) {
            return cuda::DeviceInputs{d_x.get() + s * x_shift * g.d, ids[s].get(), wts[s].get(), T, g.k};
          };
          // ---- warm-up, then timed runs rotating the input sets -----------------------------
          for (int i = 0; i < kWarmup; ++i)
            cuda::run_layer(layer, inputs(i % kInputSets), Arm::kProduction, ws, stream, d_y.get());
          STRATA_CUDA_CHECK(cudaStreamSynchronize(stream));
          std::vector<double> us;
          for (int i = 0; i < kRuns; ++i) {
            STRATA_CUDA_CHECK(cudaEventRecord(start, stream));
            cuda::run_layer(layer, inputs(i % kInputSets), Arm::kProduction, ws, stream, d_y.get());
            STRATA_CUDA_CHECK(cudaEventRecord(stop, stream));
            STRATA_CUDA_CHECK(cudaEventSynchronize(stop));
            float ms = 0;
            STRATA_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
            us.push_back(1e3 * ms);
          }
          std::vector<double> ph[6];
          for (int i = 0; i < 7; ++i) {
            cuda::PhaseTimes t;
            cuda::run_layer(layer, inputs(i % kInputSets), Arm::kProduction, ws, stream, d_y.get(), &t);
            const float v[6] = {t.quantize_us, t.group_us, t.gate_up_us, t.swiglu_us, t.down_us, t.combine_us};
            for (int p = 0; p < 6; ++p) ph[p].push_back(v[p]);
          }
          const double layer_us = median(us);
          const double ops = 2.0 * T * g.k * 3.0 * g.d * g.f;
          const double tops = ops / (layer_us * 1e-6) / 1e12;
          const double gbs = touched_bytes / (layer_us * 1e-6) / 1e9;
          const double ggml = uniform ? ggml_layer_us(g.name, T) : 0.0;
          const double ratio = ggml > 0 ? ggml / layer_us : 0.0;
          char line[512];
          std::snprintf(line, sizeof line,
                        "%-11s %6lld %-7s %9.1f %7.1f %6.1f%% %7.0f | %6.1f %6.1f %8.1f %6.1f %8.1f %6.1f | %8.0f %6.2fx",
                        g.name, static_cast<long long>(T), uniform ? "uniform" : "skewed", layer_us, tops,
                        100.0 * tops / kMmaSyncCeilingTops, gbs, median(ph[0]), median(ph[1]), median(ph[2]),
                        median(ph[3]), median(ph[4]), median(ph[5]), ggml, ratio);
          std::printf("%s\n", line);
          std::fflush(stdout);
          table.emplace_back(line);
          char obj[1024];
          std::snprintf(obj, sizeof obj,
                        "    {\"geometry\": \"%s\", \"d\": %lld, \"f\": %lld, \"E\": %lld, \"k\": %d, \"T\": %lld, "
                        "\"routing\": \"%s\", \"us\": %.2f, \"tops\": %.2f, \"ceiling_fraction\": %.4f, "
                        "\"weight_gb_per_s\": %.1f, \"phases_us\": {\"quantize\": %.2f, \"group\": %.2f, "
                        "\"gate_up\": %.2f, \"swiglu\": %.2f, \"down\": %.2f, \"combine\": %.2f}, "
                        "\"ggml_us\": %.0f, \"ggml_over_ours\": %.3f, \"runs\": %d}",
                        g.name, static_cast<long long>(g.d), static_cast<long long>(g.f),
                        static_cast<long long>(g.n_expert), g.k, static_cast<long long>(T),
                        uniform ? "uniform" : "skewed", layer_us, tops, tops / kMmaSyncCeilingTops, gbs,
                        median(ph[0]), median(ph[1]), median(ph[2]), median(ph[3]), median(ph[4]), median(ph[5]),
                        ggml, ratio, kRuns);
          json += (first_cell ? "" : ",\n") + std::string(obj);
          first_cell = false;
        }
      }
      STRATA_CUDA_CHECK(cudaEventDestroy(start));
      STRATA_CUDA_CHECK(cudaEventDestroy(stop));
      STRATA_CUDA_CHECK(cudaStreamDestroy(stream));
    }
    json += "\n  ]\n}\n";
    if (json_path != nullptr) {
      FILE* out = std::fopen(json_path, "w");
      if (out != nullptr) {
        std::fputs(json.c_str(), out);
        std::fclose(out);
      }
    }
    std::printf("\n%-11s %6s %-7s %9s %7s %7s %7s | %6s %6s %8s %6s %8s %6s | %8s %7s\n", "geometry", "T", "routing",
                "us", "TOPS", "ceil", "GB/s", "quant", "group", "gate_up", "swiglu", "down", "comb", "ggml_us",
                "ggml/us");
    for (const std::string& line : table) std::printf("%s\n", line.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "strata-moe-gpu-cells: %s\n", e.what());
    return 1;
  }
  return 0;
}

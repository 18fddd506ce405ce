#pragma once
/// The attention path of a cell's K/V pair and the memory its server allocated per device, read from a
/// llama.cpp server log: the build's backends and FlashAttention kernel list, the conversion warning,
/// the graph splits and the model, KV and compute buffers.

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvsweep::server {

/// One buffer owner as llama.cpp names it ("CUDA0", "CPU_Mapped", "CUDA_Host", "CPU") and what it
/// allocated at load, in MiB (several caches or model parts on one device add up).
struct DeviceMemory {
  std::string device;
  bool gpu = false;  // device memory: not the CPU's, not pinned host memory (`…_Host`)
  double model_mib = 0;
  double kv_mib = 0;
  double compute_mib = 0;
};

/// Whether a llama.cpp buffer or device name is GPU memory: not `CPU…`, `BLAS` or pinned host memory (`…_Host`).
bool is_gpu_device(std::string_view name);

/// The graph's splits as `sched_reserve: graph: … splits = N` (or `N / M` for prompt / decode) logs them.
struct GraphSplits {
  int pp = -1;  // -1: not in the log
  int tg = -1;
};

/// What a llama.cpp log says about the build, the attention kernel and the buffers.
struct AttentionFacts {
  std::vector<std::string> devices;   // device_info: "CUDA0", "CPU"
  std::vector<std::string> backends;  // system_info's sections: "CUDA", "CPU"
  std::string fa_quants;              // system_info's FA_QUANTS ("q4_0-q4_0,…" or "all"); "" when absent
  /// system_info's CPU section, the features the build computes with ("AVX2", "AVX512", "AMX_INT8", …: those
  /// "= 1", in the log's order); empty when absent. Built -march=native, they are the build host's CPU;
  /// its kernels' rounding follows them (AVX-512 and AVX2 builds move near-tied greedy tokens).
  std::vector<std::string> cpu_features;
  int head_dim_k = 0;                 // print_info: n_embd_head_k / _v; 0 when absent
  int head_dim_v = 0;
  GraphSplits splits;
  std::string converted;  // the pair the conversion warning names ("q8_0-q4_0"); "" when none
  std::vector<DeviceMemory> memory;

  /// Whether the log showed any of these lines.
  bool any() const;
  /// A build with a GPU device (device_info), or without device_info a GPU backend (system_info).
  bool gpu_build() const;
};

AttentionFacts parse_attention_facts(const std::string& log);

/// How the cell's attention runs: `vec` (a FlashAttention vector kernel is compiled for the pair),
/// `converted` (none is: K and V are converted to f16 at every decode step), `cpu` (a CPU build, or
/// the KV cache in host memory), `fallback` (printed `fallback?`: a GPU build whose graph has more
/// splits than its reference cell's and no warning — an older build ran the attention on the CPU),
/// `unknown`.
enum class AttentionPath { vec, converted, cpu, fallback, unknown };
std::string_view to_string(AttentionPath path);
AttentionPath attention_path_from_string(std::string_view text);  // unknown for anything else

struct PathVerdict {
  AttentionPath path = AttentionPath::unknown;
  std::string reason;  // why, in a few words; names the remedy for converted and fallback
};

/// The path from the cell's own log. `fallback` needs the reference cell's splits: against_reference.
PathVerdict attention_path(const AttentionFacts& facts, const std::string& type_k, const std::string& type_v,
                           const std::string& flash_attn);

/// `fallback?` when a cell whose own log gave `own` (vec or unknown) has more graph splits than its
/// reference cell, else `own`.
PathVerdict against_reference(const PathVerdict& own, const GraphSplits& cell, const GraphSplits& reference,
                              const std::string& type_k, const std::string& type_v, const std::string& fa_quants);

/// What to do about a converted or fallback pair: compile its kernel, or use a pair that has one.
std::string path_remedy(const std::string& type_k, const std::string& type_v, const std::string& fa_quants);

/// {"backends", "devices", "fa_quants", "head_dim_k", "head_dim_v", "splits", "converted"}: what was read.
nlohmann::json to_json(const AttentionFacts& facts);
/// [{"device", "gpu", "model_mib", "kv_mib", "compute_mib"}, …]
nlohmann::json memory_json(const std::vector<DeviceMemory>& memory);
GraphSplits splits_from_json(const nlohmann::json& j);

}  // namespace kvsweep::server

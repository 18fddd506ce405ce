#include "kvsweep/server/attention_path.hpp"

#include <algorithm>
#include <array>
#include <regex>
#include <sstream>

namespace kvsweep::server {

namespace {

// The K/V types CUDA's FlashAttention vector kernels have instances for (ggml/cmake/common.cmake,
// FA_TYPES); f32 is served by the f16 instance (fattn.cu, FATTN_VEC_CASE).
constexpr std::array<std::string_view, 7> kFaTypes = {"q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "bf16", "f16"};
// GGML_CUDA_FA_QUANTS's default (ggml/CMakeLists.txt): a build that does not print its list.
constexpr std::string_view kDefaultFaQuants = "q4_0-q4_0,q8_0-q8_0,f16-f16,bf16-bf16";
// The largest head size the vector kernel takes (fattn.cu: can_use_vector_kernel, Q->ne[0] <= 256).
constexpr int kVecMaxHeadDim = 256;

std::string fa_type(const std::string& type) { return type == "f32" ? "f16" : type; }

bool has_fa_kernel_type(const std::string& type) {
  return std::find(kFaTypes.begin(), kFaTypes.end(), fa_type(type)) != kFaTypes.end();
}

/// Whether the build compiled the vector kernel for the pair: "all", or the pair in the list (f16-f16
/// is always compiled: common.cmake starts the list with it).
bool compiled(const std::string& type_k, const std::string& type_v, std::string_view fa_quants) {
  if (!has_fa_kernel_type(type_k) || !has_fa_kernel_type(type_v)) return false;
  if (fa_quants == "all") return true;
  const std::string pair = fa_type(type_k) + "-" + fa_type(type_v);
  if (pair == "f16-f16") return true;
  std::istringstream in{std::string(fa_quants)};
  for (std::string item; std::getline(in, item, ',');) {
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (item == pair) return true;
  }
  return false;
}

DeviceMemory& memory_of(std::vector<DeviceMemory>& memory, const std::string& device) {
  for (auto& m : memory)
    if (m.device == device) return m;
  memory.push_back({device, is_gpu_device(device), 0, 0, 0});
  return memory.back();
}

void add_unique(std::vector<std::string>& list, const std::string& name) {
  if (std::find(list.begin(), list.end(), name) == list.end()) list.push_back(name);
}

bool is_gpu_backend(const std::string& name) { return name != "CPU" && name != "BLAS" && name != "RPC"; }

}  // namespace

bool is_gpu_device(std::string_view name) {
  const bool host = name.size() >= 5 && name.substr(name.size() - 5) == "_Host";
  return !name.starts_with("CPU") && name != "BLAS" && !host;
}

bool AttentionFacts::any() const {
  return !devices.empty() || !backends.empty() || splits.pp >= 0 || !converted.empty() || !memory.empty();
}

bool AttentionFacts::gpu_build() const {
  if (!devices.empty()) return std::any_of(devices.begin(), devices.end(), [](const auto& d) { return is_gpu_device(d); });
  return std::any_of(backends.begin(), backends.end(), is_gpu_backend);
}

AttentionFacts parse_attention_facts(const std::string& log) {
  // common_param:   - CUDA0   : NVIDIA H100 80GB HBM3 (81079 MiB, 79760 MiB free)
  static const std::regex device_re(R"(common_param:\s+- (\S+)\s*: .*\([0-9]+ MiB, [0-9]+ MiB free\))");
  // load_tensors:        CUDA0 model buffer size =    17.88 MiB   (and KV, compute)
  static const std::regex buffer_re(R"((\S+) (model|KV|compute) buffer size =\s*([0-9.]+) MiB)");
  // sched_reserve: graph: nodes = 92, splits = 2, …   or   graph (pp bs=512, tg bs=1): nodes = 92 / 90, splits = 3 / 2, …
  static const std::regex splits_re(R"(graph[^:]*: nodes = [0-9 /]+, splits = ([0-9]+)(?: / ([0-9]+))?)");
  static const std::regex head_re(R"(print_info: n_embd_head_([kv])\s*=\s*([0-9]+))");
  static const std::regex warning_re(
      R"(no FlashAttention vector kernel compiled for K/V types ([a-z0-9_]+)-([a-z0-9_]+))");
  AttentionFacts f;
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (const auto at = line.find("system_info: "); at != std::string::npos) {
      // "system_info: n_threads = 16 (…) / 16 | CUDA : ARCHS = 900 | USE_GRAPHS = 1 | FA_QUANTS = … | CPU : SSE3 = 1 | …":
      // a field "NAME : KEY = V" opens a backend's section.
      std::string rest = line.substr(at + 13);
      std::size_t from = 0;
      std::string section;
      while (from <= rest.size()) {
        const std::size_t bar = rest.find(" | ", from);
        std::string field = rest.substr(from, bar == std::string::npos ? std::string::npos : bar - from);
        if (const auto colon = field.find(" : "); colon != std::string::npos) {
          section = field.substr(0, colon);
          add_unique(f.backends, section);
          field = field.substr(colon + 3);
        }
        if (const auto q = field.find("FA_QUANTS = "); q != std::string::npos) f.fa_quants = field.substr(q + 12);
        // The CPU section's "NAME = 1" fields: the features the CPU kernels are built with.
        if (section == "CPU" && field.size() > 4 && field.ends_with(" = 1"))
          add_unique(f.cpu_features, field.substr(0, field.size() - 4));
        if (bar == std::string::npos) break;
        from = bar + 3;
      }
    } else if (std::regex_search(line, m, device_re)) {
      add_unique(f.devices, m[1].str());
    } else if (line.find(" buffer size = ") != std::string::npos && std::regex_search(line, m, buffer_re)) {
      DeviceMemory& d = memory_of(f.memory, m[1].str());
      const double mib = std::stod(m[3].str());
      // Several models parts or caches (SWA) on one device add up; the scheduler's last reserve is the compute buffer.
      if (m[2] == "model") d.model_mib += mib;
      else if (m[2] == "KV") d.kv_mib += mib;
      else d.compute_mib = mib;
    } else if (std::regex_search(line, m, splits_re)) {
      f.splits.pp = std::stoi(m[1].str());
      f.splits.tg = m[2].matched ? std::stoi(m[2].str()) : f.splits.pp;
    } else if (std::regex_search(line, m, head_re)) {
      (m[1] == "k" ? f.head_dim_k : f.head_dim_v) = std::stoi(m[2].str());
    } else if (std::regex_search(line, m, warning_re)) {
      f.converted = m[1].str() + "-" + m[2].str();
    }
  }
  return f;
}

std::string_view to_string(AttentionPath path) {
  switch (path) {
    case AttentionPath::vec: return "vec";
    case AttentionPath::converted: return "converted";
    case AttentionPath::cpu: return "cpu";
    case AttentionPath::fallback: return "fallback?";
    case AttentionPath::unknown: break;
  }
  return "unknown";
}

AttentionPath attention_path_from_string(std::string_view text) {
  for (auto p : {AttentionPath::vec, AttentionPath::converted, AttentionPath::cpu, AttentionPath::fallback})
    if (to_string(p) == text) return p;
  return AttentionPath::unknown;
}

std::string path_remedy(const std::string& type_k, const std::string& type_v, const std::string& fa_quants) {
  const std::string_view list = fa_quants.empty() ? kDefaultFaQuants : std::string_view(fa_quants);
  // A pair that has its kernel in this build: K's own symmetric pair first (K is usually the more
  // sensitive half), then V's, then q8_0/q8_0 and f16/f16.
  std::string instead = "f16/f16";
  for (const auto& [k, v] : {std::pair{type_k, type_k}, {type_v, type_v}, {std::string("q8_0"), std::string("q8_0")}}) {
    if ((k != type_k || v != type_v) && compiled(k, v, list)) {
      instead = k + "/" + v;
      break;
    }
  }
  const std::string pair = type_k + "-" + type_v;
  if (!has_fa_kernel_type(type_k) || !has_fa_kernel_type(type_v))
    return "no CUDA FlashAttention kernel exists for " + pair + "; use " + instead;
  return "add " + pair + " to GGML_CUDA_FA_QUANTS (or build with GGML_CUDA_FA_QUANTS=all, as scripts/llama-cpp does "
         "on a CUDA machine), or use " + instead;
}

PathVerdict attention_path(const AttentionFacts& f, const std::string& type_k, const std::string& type_v,
                           const std::string& flash_attn) {
  const std::string pair = type_k + "-" + type_v;
  if (!f.converted.empty()) {
    return {AttentionPath::converted, "the server logged: no FlashAttention vector kernel compiled for " + f.converted +
                                          ", K and V converted to f16 at every decode step; remedy: " +
                                          path_remedy(type_k, type_v, f.fa_quants)};
  }
  if (f.devices.empty() && f.backends.empty()) return {AttentionPath::unknown, "the log names no backend"};
  if (!f.gpu_build()) return {AttentionPath::cpu, "a CPU build: the attention runs on the CPU"};
  const bool kv_on_gpu = std::any_of(f.memory.begin(), f.memory.end(), [](const auto& m) { return m.gpu && m.kv_mib > 0; });
  const bool kv_seen = std::any_of(f.memory.begin(), f.memory.end(), [](const auto& m) { return m.kv_mib > 0; });
  if (kv_seen && !kv_on_gpu) return {AttentionPath::cpu, "the KV cache is in host memory: the attention runs on the CPU"};
  if (flash_attn == "disabled") return {AttentionPath::unknown, "flash attention disabled: no FlashAttention kernel"};
  if (std::find(f.backends.begin(), f.backends.end(), "CUDA") == f.backends.end())
    return {AttentionPath::unknown, "not a CUDA build: GGML_CUDA_FA_QUANTS does not apply"};
  if (!has_fa_kernel_type(type_k) || !has_fa_kernel_type(type_v)) {
    return {AttentionPath::unknown, "no CUDA FlashAttention kernel handles " + pair +
                                        ": the attention may run on the CPU (more graph splits than the reference's)"};
  }
  // Head size above 256 (the copy model: 512) never takes the vector kernel (fattn.cu:
  // can_use_vector_kernel needs Q->ne[0] <= 256). On Turing and newer the MMA kernel runs it and
  // converts a quantized K/V to f16 for every pair, compiled in FA_QUANTS or not
  // (ggml_cuda_flash_attn_ext_get_alloc_size: need_f16_K/V for MMA_F16 and TILE), and nothing is
  // logged. Which kernel runs depends on the GPU's compute capability and, at 512, on the GQA
  // optimisation applying (else no CUDA kernel at all), none of which the log states; and
  // GGML_CUDA_FA_QUANTS cannot change it, so `converted` and its remedy would mislead: unknown.
  if (f.head_dim_k > kVecMaxHeadDim || f.head_dim_v > kVecMaxHeadDim) {
    const bool quantized = fa_type(type_k) != "f16" || fa_type(type_v) != "f16";
    return {AttentionPath::unknown, "head size " + std::to_string(std::max(f.head_dim_k, f.head_dim_v)) +
                                        " > 256: no vector kernel; " +
                                        (quantized ? "the MMA/tile kernels convert a quantized K/V to f16 for every "
                                                     "pair, whatever GGML_CUDA_FA_QUANTS holds"
                                                   : "the MMA/tile kernels take f16 K/V as they are")};
  }
  if (f.fa_quants.empty())
    return {AttentionPath::unknown, "the build does not state FA_QUANTS (older than September 2026)"};
  if (compiled(type_k, type_v, f.fa_quants))
    return {AttentionPath::vec, "a vector kernel is compiled for " + pair + " (FA_QUANTS " + f.fa_quants + ")"};
  // Not compiled and no warning yet: the warning comes at the first decode step (warm-up, unless --no-warmup).
  return {AttentionPath::converted, pair + " is not in FA_QUANTS (" + f.fa_quants +
                                        "): K and V are converted to f16 at every decode step; remedy: " +
                                        path_remedy(type_k, type_v, f.fa_quants)};
}

PathVerdict against_reference(const PathVerdict& own, const GraphSplits& cell, const GraphSplits& reference,
                              const std::string& type_k, const std::string& type_v, const std::string& fa_quants) {
  if (own.path != AttentionPath::vec && own.path != AttentionPath::unknown) return own;
  if (cell.pp < 0 || reference.pp < 0 || (cell.pp <= reference.pp && cell.tg <= reference.tg)) return own;
  return {AttentionPath::fallback,
          "the graph has " + std::to_string(cell.pp) + (cell.tg != cell.pp ? " / " + std::to_string(cell.tg) : "") +
              " splits against the reference's " + std::to_string(reference.pp) +
              (reference.tg != reference.pp ? " / " + std::to_string(reference.tg) : "") +
              " and no conversion warning: the attention may run on the CPU (an older build without a kernel for " +
              type_k + "-" + type_v + "); remedy: " + path_remedy(type_k, type_v, fa_quants)};
}

nlohmann::json to_json(const AttentionFacts& f) {
  nlohmann::json j = {{"backends", f.backends}, {"devices", f.devices}};
  if (!f.fa_quants.empty()) j["fa_quants"] = f.fa_quants;
  if (!f.cpu_features.empty()) j["cpu_features"] = f.cpu_features;
  if (f.head_dim_k > 0) j["head_dim_k"] = f.head_dim_k;
  if (f.head_dim_v > 0) j["head_dim_v"] = f.head_dim_v;
  if (f.splits.pp >= 0) j["splits"] = {{"pp", f.splits.pp}, {"tg", f.splits.tg}};
  if (!f.converted.empty()) j["converted"] = f.converted;
  return j;
}

nlohmann::json memory_json(const std::vector<DeviceMemory>& memory) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& m : memory)
    out.push_back({{"device", m.device}, {"gpu", m.gpu}, {"model_mib", m.model_mib}, {"kv_mib", m.kv_mib},
                   {"compute_mib", m.compute_mib}});
  return out;
}

GraphSplits splits_from_json(const nlohmann::json& j) {
  GraphSplits s;
  if (!j.is_object()) return s;
  s.pp = j.value("pp", -1);
  s.tg = j.value("tg", s.pp);
  return s;
}

}  // namespace kvsweep::server

#include "kvsweep/server/backend.hpp"

#include "kvsweep/server/context_override.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <deque>
#include <mutex>
#include <regex>
#include <sstream>

namespace kvsweep::server {

nlohmann::json to_json(const EffectiveKv& e) {
  nlohmann::json j = {{"found", e.found}, {"declared", e.declared}, {"type_k", e.type_k}, {"type_v", e.type_v}};
  if (e.found) {
    j["k_mib"] = e.k_mib;
    j["v_mib"] = e.v_mib;
    j["kv_mib"] = e.total_mib;
  }
  j["flash_attn"] = e.flash_attn;
  if (e.attn_rot_k >= 0) j["attn_rot_k"] = e.attn_rot_k;
  if (e.attn_rot_v >= 0) j["attn_rot_v"] = e.attn_rot_v;
  if (e.n_ctx > 0) j["n_ctx"] = e.n_ctx;
  if (e.slot_cap > 0) j["slot_cap"] = e.slot_cap;
  if (e.attention.any()) {
    j["attention"] = to_json(e.attention);
    // This log's own verdict, before the reference's splits are compared (sweep::resolve_attention_paths).
    j["attention"]["path"] = to_string(e.path.path);
    j["attention"]["reason"] = e.path.reason;
    j["memory"] = memory_json(e.attention.memory);
  }
  if (e.found || e.attention.any()) {
    j["path"] = to_string(e.path.path);
    j["path_reason"] = e.path.reason;
  }
  return j;
}

EffectiveKv parse_effective_kv(const std::string& log) {
  // llama_kv_cache: size =   16.00 MiB (  4096 cells,   2 layers,  1/1 seqs), K (q4_0):    4.50 MiB, V (f16):   8.00 MiB
  static const std::regex kv_re(
      R"(llama_kv_cache[^:]*: size =\s*([0-9.]+) MiB.*K \(([a-z0-9_]+)\):\s*([0-9.]+) MiB, V \(([a-z0-9_]+)\):\s*([0-9.]+) MiB)");
  static const std::regex fa_re(R"(llama_context: flash_attn\s*=\s*([a-z]+))");
  // llama_kv_cache: attn_rot_k = 1, n_embd_head_k_all = 512
  static const std::regex rot_re(R"(llama_kv_cache[^:]*: attn_rot_([kv]) = ([0-9]+))");
  // llama_context: n_ctx                 = 6144   (not n_ctx_seq, n_ctx_train)
  static const std::regex ctx_re(R"(llama_context: n_ctx\s*=\s*([0-9]+))");
  // llama_model_loader: - kv   0:                       general.architecture str              = llama
  static const std::regex arch_re(R"(general\.architecture\s+str\s*=\s*([A-Za-z0-9_.-]+))");
  // srv    load_model: the slot context (131328) exceeds the training context of the model (8192) - capping
  static const std::regex cap_re(R"(the slot context \(([0-9]+)\) exceeds the training context of the model \(([0-9]+)\))");
  EffectiveKv e;
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, kv_re)) {
      // Models with several caches (SWA) print one line each: the types must agree; sizes add up.
      if (e.found && (e.type_k != m[2].str() || e.type_v != m[4].str())) {
        e.type_k += "," + m[2].str();
        e.type_v += "," + m[4].str();
      } else {
        e.type_k = m[2].str();
        e.type_v = m[4].str();
      }
      e.total_mib += std::stod(m[1].str());
      e.k_mib += std::stod(m[3].str());
      e.v_mib += std::stod(m[5].str());
      e.found = true;
    } else if (std::regex_search(line, m, fa_re)) {
      e.flash_attn = m[1].str();
    } else if (std::regex_search(line, m, rot_re)) {
      // Several caches (SWA) print one line each; a cell rotates if any of them does.
      int& rot = m[1].str() == "k" ? e.attn_rot_k : e.attn_rot_v;
      rot = std::max(rot, m[2].str() == "0" ? 0 : 1);
    } else if (std::regex_search(line, m, ctx_re)) {
      e.n_ctx = std::stoi(m[1].str());
    } else if (std::regex_search(line, m, cap_re)) {
      e.slot_cap = std::stoi(m[2].str());
    } else if (e.architecture.empty() && std::regex_search(line, m, arch_re)) {
      e.architecture = m[1].str();
    }
  }
  e.attention = parse_attention_facts(log);
  e.path = attention_path(e.attention, e.type_k, e.type_v, e.flash_attn);
  return e;
}

std::string check_settings(const EffectiveKv& e, const CellSpec& spec) {
  std::vector<std::string> differ;
  if (e.n_ctx > 0 && spec.n_ctx > 0 && e.n_ctx != spec.n_ctx && !(spec.n_ctx_at_most && e.n_ctx < spec.n_ctx))
    differ.push_back("requested a context of " + std::to_string(spec.n_ctx) + " tokens, the server allocated " +
                     std::to_string(e.n_ctx) +
                     (e.n_ctx < spec.n_ctx ? " (a server may cap it at the model's training context, as Ollama "
                                             "does: set server.ctx to at most that)"
                                           : ""));
  if (e.slot_cap > 0 && spec.n_ctx > e.slot_cap && !spec.n_ctx_at_most)
    differ.push_back("requested a context of " + std::to_string(spec.n_ctx) +
                     " tokens, llama-server gives each slot at most the model's training context, " +
                     std::to_string(e.slot_cap) +
                     " tokens (set server.ctx to at most that, or add " +
                     context_override_args(e.architecture, spec.n_ctx) +
                     " to server.args to run the model past its training)");
  // The last -fa/--flash-attn on the command line is the one llama-server keeps.
  std::string fa;
  for (std::size_t i = 0; i + 1 < spec.extra_args.size(); ++i)
    if (spec.extra_args[i] == "-fa" || spec.extra_args[i] == "--flash-attn") fa = spec.extra_args[i + 1];
  const std::string want = fa == "on" ? "enabled" : fa == "off" ? "disabled" : "";
  if (!want.empty() && !e.flash_attn.empty() && e.flash_attn != want)
    differ.push_back("requested flash attention " + fa + " (-fa " + fa + "), the server ran it " + e.flash_attn);
  // llama.cpp reads LLAMA_ATTN_ROT_DISABLE with atoi: any non-zero number turns the rotation off.
  std::optional<std::string> rot_disable;
  for (const auto& [name, value] : spec.env)
    if (name == "LLAMA_ATTN_ROT_DISABLE") rot_disable = value;
  if (rot_disable && std::atoi(rot_disable->c_str()) != 0 && (e.attn_rot_k == 1 || e.attn_rot_v == 1))
    differ.push_back("requested no attention rotation (LLAMA_ATTN_ROT_DISABLE=" + *rot_disable +
                     "), the server rotated " + (e.attn_rot_k == 1 ? std::string("K") : std::string()) +
                     (e.attn_rot_k == 1 && e.attn_rot_v == 1 ? " and " : "") + (e.attn_rot_v == 1 ? "V" : ""));
  std::string out;
  for (const auto& d : differ) out += (out.empty() ? "" : "; ") + d;
  return out;
}

CellOutcome classify_load_failure(const std::string& log) {
  static const char* kUnsupported[] = {
      "quantized V cache requires flash_attn",
      "requires Flash Attention",
      "Unsupported cache type",
      "does not divide n_embd_head",
      "does not support different K",
  };
  for (const char* needle : kUnsupported) {
    if (log.find(needle) != std::string::npos) return CellOutcome::unsupported;
  }
  return CellOutcome::load_failed;
}

std::string server_error_lines(const std::string& log, std::size_t last) {
  // llama.cpp: "0.00.026.585 E llama_model_load: …" (or "E …" without the timestamp); Ollama: "level=ERROR".
  static const std::regex error_re(R"(^(\S+ )?E |level=ERROR)");
  std::vector<std::string> lines;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(std::move(line));
  const std::size_t tail_from = lines.size() > last ? lines.size() - last : 0;
  // At most this many error lines: a server that loops on an error would fill the message.
  constexpr std::size_t kMaxErrorLines = 12;
  std::string out;
  std::size_t errors = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const bool error = i < tail_from && errors < kMaxErrorLines && std::regex_search(lines[i], error_re);
    if (error) ++errors;
    if (error || i >= tail_from) out += lines[i] + "\n";
  }
  return out;
}

int free_port() {
  // Cells starting at once (--parallel-cells) must not be handed the same port: the kernel may
  // give a just-closed port out again before the first server has bound it.
  static std::mutex mutex;
  static std::deque<int> recent;
  std::lock_guard lock(mutex);
  for (int attempt = 0; attempt < 16; ++attempt) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return 0;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    int port = 0;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
      socklen_t len = sizeof addr;
      if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) port = ntohs(addr.sin_port);
    }
    ::close(fd);
    if (port == 0) return 0;
    if (std::find(recent.begin(), recent.end(), port) != recent.end()) continue;
    recent.push_back(port);
    if (recent.size() > 64) recent.pop_front();
    return port;
  }
  return 0;
}

}  // namespace kvsweep::server

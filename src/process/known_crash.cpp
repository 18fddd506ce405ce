#include "kvsweep/process/known_crash.hpp"

#include "kvsweep/core/read_file.hpp"

namespace kvsweep::process {

namespace {

constexpr std::string_view kUpstream = "ggml-org/llama.cpp#20824";
constexpr std::string_view kBuildWithout =
    "a llama.cpp build without AMX (scripts/llama-cpp builds one; your own: cmake "
    "-DCMAKE_C_FLAGS=\"-mno-amx-tile -mno-amx-int8 -mno-amx-bf16\" and the same CMAKE_CXX_FLAGS; docs/backends-and-servers.md, \"Hosts\")";

bool contains(std::string_view text, std::string_view what) { return text.find(what) != std::string_view::npos; }

/// A word of /proc/cpuinfo's "flags" lines, whole (amx_int8, not a prefix of another flag).
bool has_flag(std::string_view cpuinfo, std::string_view flag) {
  std::size_t at = 0;
  while ((at = cpuinfo.find(flag, at)) != std::string_view::npos) {
    const bool starts = at == 0 || cpuinfo[at - 1] == ' ' || cpuinfo[at - 1] == '\t';
    const std::size_t end = at + flag.size();
    const bool ends = end == cpuinfo.size() || cpuinfo[end] == ' ' || cpuinfo[end] == '\n' || cpuinfo[end] == '\t';
    if (starts && ends) return true;
    at = end;
  }
  return false;
}

}  // namespace

bool log_shows_amx_buffer(std::string_view log) {
  return contains(log, "AMX model buffer size") || contains(log, "ggml_backend_amx_");
}

bool log_shows_amx_build(std::string_view log) { return contains(log, "AMX_INT8 = 1"); }

bool cpu_has_amx(std::string_view cpuinfo) { return has_flag(cpuinfo, "amx_int8") || has_flag(cpuinfo, "amx_tile"); }

bool host_has_amx() {
  static const bool has = [] {
    auto text = core::read_file("/proc/cpuinfo", core::Links::follow);
    return text && cpu_has_amx(*text);
  }();
  return has;
}

std::optional<bool> binary_has_amx(const std::filesystem::path& binary) {
  auto bytes = core::read_file(binary, core::Links::follow);
  if (!bytes) return std::nullopt;
  return contains(*bytes, "ggml_backend_amx");
}

std::string amx_host_note(bool host_amx, const std::filesystem::path& binary, std::optional<bool> has_amx) {
  if (!host_amx) return {};
  const std::string head = "host: this CPU has AMX; llama.cpp's AMX path crashes on some such hosts (" +
                           std::string(kUpstream) + ")";
  if (!has_amx) return head + "; " + binary.string() + " could not be read to tell whether it compiles AMX in";
  if (!*has_amx) return head + "; " + binary.string() + " has no AMX code (built without it): nothing to do";
  return head + "; " + binary.string() +
         " compiles AMX in and may take that path: if its cells die by a signal, add \"--no-repack\" to server.args "
         "(Ollama: \"LLAMA_ARG_REPACK\": \"0\" in server.env; llama-bench has neither), or use " +
         std::string(kBuildWithout);
}

bool ollama_runner_crashed(std::string_view message) {
  return contains(message, "process has terminated: signal:") || contains(message, "process has terminated: exit status 139");
}

std::optional<std::string> known_crash(LlamaProgram program, std::string_view log, bool crashed, bool host_amx) {
  if (!crashed) return std::nullopt;
  const std::string cause = "llama.cpp's AMX matrix-multiply path crashed (" + std::string(kUpstream) + ")";
  const std::string seen = "its log shows the AMX model buffer";
  switch (program) {
    case LlamaProgram::server:
      if (!log_shows_amx_buffer(log)) return std::nullopt;
      return cause + ": " + seen + "; add \"--no-repack\" to server.args, or use " + std::string(kBuildWithout);
    case LlamaProgram::perplexity:
      if (!log_shows_amx_buffer(log)) return std::nullopt;
      return cause + ": " + seen + "; add \"--no-repack\" to server.args (kld passes it to llama-perplexity), or use " +
             std::string(kBuildWithout);
    case LlamaProgram::ollama:
      if (!log_shows_amx_buffer(log)) return std::nullopt;
      return cause + " in the llama-server Ollama launched: " + seen +
             "; set \"LLAMA_ARG_REPACK\": \"0\" in server.env (Ollama passes it to llama-server), or use " +
             std::string(kBuildWithout);
    case LlamaProgram::bench:
      if (log_shows_amx_buffer(log))
        return cause + ": " + seen + "; llama-bench has no --no-repack: use " + std::string(kBuildWithout);
      if (!host_amx) return std::nullopt;
      return "likely llama.cpp's AMX matrix-multiply path (" + std::string(kUpstream) +
             "): this host has AMX and llama-bench logs nothing of it (the cell's server log says AMX_INT8 = 1 "
             "when the build compiled it in); llama-bench has no --no-repack: use " + std::string(kBuildWithout);
  }
  return std::nullopt;
}

}  // namespace kvsweep::process

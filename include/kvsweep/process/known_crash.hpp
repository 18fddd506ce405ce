#pragma once
/// Crashes of llama.cpp's programs that kvsweep recognises, each named with its cause and remedies
/// in one line instead of a bare "killed by signal 11". One is known today: llama.cpp's AMX
/// matrix-multiply path (ggml_backend_amx_mul_mat) segfaults on the first batch on some
/// Sapphire-Rapids-class hosts (ggml-org/llama.cpp#20824, machine-dependent; stanfordnlp/dspy#10079
/// dropped its AMX CI variant for it). A build that compiles AMX in (its system_info says
/// AMX_INT8 = 1) keeps the weights in an "AMX model buffer" on a host with AMX; `--no-repack`
/// (LLAMA_ARG_REPACK=0) keeps them out, and a build without AMX cannot take the path at all
/// (scripts/llama-cpp builds one: -mno-amx-tile -mno-amx-int8 -mno-amx-bf16 beside -march=native).

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace kvsweep::process {

/// The llama.cpp program that died: each has its own remedy.
enum class LlamaProgram {
  server,      // llama-server kvsweep launched
  perplexity,  // llama-perplexity (the kld probe)
  bench,       // llama-bench (the speed probe): it has no --no-repack and logs nothing by default
  ollama,      // the llama-server Ollama launched
};

/// Whether `log` shows the AMX path taken: the AMX weight buffer ("AMX model buffer size") or a
/// frame of ggml_backend_amx_* in a backtrace.
bool log_shows_amx_buffer(std::string_view log);

/// Whether `log` shows a build with AMX compiled in: system_info's "AMX_INT8 = 1".
bool log_shows_amx_build(std::string_view log);

/// Whether the CPU described by `cpuinfo` (the text of /proc/cpuinfo) has AMX (flag amx_int8 or amx_tile).
bool cpu_has_amx(std::string_view cpuinfo);

/// This host's CPU has AMX (/proc/cpuinfo; false where it cannot be read).
bool host_has_amx();

/// Whether the llama.cpp program at `binary` has the AMX path compiled in: its bytes name
/// ggml_backend_amx_* (symbols and log strings exist only in such a build; a stripped binary may hide
/// them). nullopt: it cannot be read.
std::optional<bool> binary_has_amx(const std::filesystem::path& binary);

/// The dry run's line about this host and `binary` (the server kvsweep would launch), or empty when
/// the host has no AMX: whether the build can take the AMX path, and the remedies if it can.
std::string amx_host_note(bool host_amx, const std::filesystem::path& binary, std::optional<bool> has_amx);

/// What the program's death is known to be, as one line: the cause, the evidence and the remedies.
/// `crashed`: it died by a signal (Ollama: its answer says the runner terminated by a signal). The
/// AMX crash is named when the log shows the AMX buffer; for llama-bench, which logs nothing of it,
/// when the host has AMX (`host_amx`), worded as what it likely is. nullopt: nothing known.
std::optional<std::string> known_crash(LlamaProgram program, std::string_view log, bool crashed, bool host_amx);

/// Ollama's words for a runner that died by a signal ("llama-server process has terminated: signal: …").
bool ollama_runner_crashed(std::string_view message);

}  // namespace kvsweep::process

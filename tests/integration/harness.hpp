#pragma once
/// Test harness for integration tests: runs the built kvsweep binary against the real
/// llama-server on the tiny model, in a fresh temporary directory per test.

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvsweep::testing {

/// The directory holding llama-server (KVSWEEP_LLAMA_BIN, else the build's KVSWEEP_LLAMA_DIR).
std::string llama_bin_dir();
/// The directory holding the real `ollama` (KVSWEEP_OLLAMA_BIN, else the build's KVSWEEP_OLLAMA_DIR,
/// printed by scripts/ollama). Throws when it holds no ollama. kvsweep runs with KVSWEEP_OLLAMA_BIN set to it.
std::string ollama_bin_dir();
/// The tiny model, made once per test binary (seed 1).
std::filesystem::path tiny_model();
/// The copy model (kvsweep tiny-model --kind copy, default knobs), made once per test binary.
std::filesystem::path copy_model();

/// The real models (scripts/models, through the build's KVSWEEP_MODELS_DIR; KVSWEEP_MODELS overrides):
/// SmolLM2-135M-Instruct Q4_1 and all-MiniLM-L6-v2 as f16 GGUF. Throws when the file is missing.
std::filesystem::path smollm2_model();
std::filesystem::path minilm_model();

struct Result {
  int exit_code = -1;
  std::string output;  // stdout and stderr, interleaved
};

/// A fresh directory under /tmp, removed at destruction unless KVSWEEP_KEEP_TMP is set.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::filesystem::path& path() const { return m_path; }
  std::filesystem::path operator/(const std::string& name) const { return m_path / name; }

 private:
  std::filesystem::path m_path;
};

/// How much slower than an idle machine this run may be: KVSWEEP_TEST_TIME_SCALE (a number >= 1,
/// default 1; scripts/test sets 3 for the sanitizer pass). Every wait of the harness (run_kvsweep,
/// Background::wait, wait_until) is multiplied by it, and so is each timeout a test must outlast.
double time_scale();
/// `seconds` × time_scale(), rounded up: for timeouts written into a config.
int scaled_s(double seconds);

/// Runs kvsweep with `args` to completion (killed after timeout_s × time_scale()).
Result run_kvsweep(const std::vector<std::string>& args, double timeout_s = 300);
/// The same with `input` on stdin (stdin is /dev/null otherwise).
Result run_kvsweep_with_input(const std::vector<std::string>& args, const std::string& input, double timeout_s = 300);

/// A kvsweep process running in the background.
class Background {
 public:
  explicit Background(const std::vector<std::string>& args, std::filesystem::path log);
  ~Background();
  pid_t pid() const { return m_pid; }
  /// Waits for exit (at most timeout_s × time_scale()); returns the shell-style exit code (128 +
  /// signal when killed, -1 when it had to be killed for the timeout).
  int wait(double timeout_s = 300);
  std::string output() const;

 private:
  pid_t m_pid = -1;
  std::filesystem::path m_log;
  int m_code = -1;
  bool m_done = false;
};

/// A config document for the tiny model (callers adjust it), written by write_config.
nlohmann::json base_config(const std::filesystem::path& model);
std::filesystem::path write_config(const TempDir& dir, const nlohmann::json& config, const std::string& name = "sweep.json");
/// Cued recall (raw mode, signature cue, stops one line after the body) on the copy model: K
/// `k_types` over V f16, `items` targets sampled from `functions` random-body functions of `lines`
/// body lines each, ctx 6144, -t 1. Callers add the environment or variants (rotation).
nlohmann::json copy_recall_config(const std::vector<std::string>& k_types, int functions, int items, int lines);

/// Every line of records.jsonl parsed (the file must be fully valid).
std::vector<nlohmann::json> read_records(const std::filesystem::path& run_dir);
nlohmann::json read_manifest(const std::filesystem::path& run_dir);
/// The whole file as text ("" when it cannot be read).
std::string read_text(const std::filesystem::path& file);
std::size_t count_lines(const std::filesystem::path& file);

/// PIDs of processes whose command line contains `needle` (scanning /proc).
std::vector<pid_t> pids_with_arg(const std::string& needle);
/// Waits until `pred` holds or timeout_s × time_scale() passes; returns whether it held. The timeout
/// is a bound for a machine under load, never a speed the test expects.
bool wait_until(const std::function<bool()>& pred, double timeout_s);

}  // namespace kvsweep::testing

#include "harness.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace kvsweep::testing {

namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

pid_t spawn(const std::vector<std::string>& args, const std::filesystem::path& log,
            const std::filesystem::path& input = "/dev/null") {
  std::vector<std::string> argv_s = {KVSWEEP_BINARY};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::string bin = llama_bin_dir();
  std::string ollama;
  if (const char* e = std::getenv("KVSWEEP_OLLAMA_BIN"); e && *e) ollama = e;
  else ollama = KVSWEEP_OLLAMA_DIR;
  pid_t pid = ::fork();
  if (pid == 0) {
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    const int in = ::open(input.c_str(), O_RDONLY);
    ::dup2(in, 0);
    ::setenv("KVSWEEP_LLAMA_BIN", bin.c_str(), 1);
    if (!ollama.empty()) ::setenv("KVSWEEP_OLLAMA_BIN", ollama.c_str(), 1);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

int wait_pid(pid_t pid, double timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s * time_scale());
  int status = 0;
  while (true) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

}  // namespace

double time_scale() {
  static const double scale = [] {
    const char* e = std::getenv("KVSWEEP_TEST_TIME_SCALE");
    if (e == nullptr || *e == '\0') return 1.0;
    char* end = nullptr;
    const double v = std::strtod(e, &end);
    if (*end != '\0' || !(v >= 1.0))
      throw std::runtime_error(std::string("KVSWEEP_TEST_TIME_SCALE=") + e + ": not a number >= 1 (try 3)");
    return v;
  }();
  return scale;
}

int scaled_s(double seconds) { return static_cast<int>(std::ceil(seconds * time_scale())); }

std::string llama_bin_dir() {
  if (const char* e = std::getenv("KVSWEEP_LLAMA_BIN"); e && *e) return e;
  return KVSWEEP_LLAMA_DIR;
}

std::string ollama_bin_dir() {
  const char* e = std::getenv("KVSWEEP_OLLAMA_BIN");
  const std::string dir = (e && *e) ? e : KVSWEEP_OLLAMA_DIR;
  if (dir.empty()) throw std::runtime_error("no Ollama: configure with -DKVSWEEP_OLLAMA_DIR=$(scripts/ollama)");
  if (::access((std::filesystem::path(dir) / "ollama").c_str(), X_OK) != 0)
    throw std::runtime_error(dir + "/ollama: missing (scripts/ollama installs it)");
  return dir;
}

namespace {
std::filesystem::path real_model(const std::string& file) {
  const char* e = std::getenv("KVSWEEP_MODELS");
  const std::filesystem::path dir = (e && *e) ? e : KVSWEEP_MODELS_DIR;
  if (dir.empty()) throw std::runtime_error("no models directory: configure with -DKVSWEEP_MODELS_DIR=$(scripts/models)");
  auto path = dir / file;
  if (!std::filesystem::is_regular_file(path))
    throw std::runtime_error(path.string() + ": missing (scripts/models installs it)");
  return path;
}
}  // namespace

std::filesystem::path smollm2_model() { return real_model("smollm2-135m-instruct-q4_1.gguf"); }
std::filesystem::path minilm_model() { return real_model("all-minilm-l6-v2-f16.gguf"); }

namespace {
/// The directory of this test process's tiny and copy models (117 MB together), removed when the
/// process exits: ctest runs every test in a process of its own, and two passes of scripts/test
/// left ~1,000 of them behind — enough to fill a disk.
std::filesystem::path models_dir() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("kvsweep-it-model-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    std::atexit([] {
      if (std::getenv("KVSWEEP_KEEP_TMP")) return;
      std::error_code ec;
      std::filesystem::remove_all(std::filesystem::temp_directory_path() /
                                      ("kvsweep-it-model-" + std::to_string(::getpid())),
                                  ec);
    });
    return d;
  }();
  return dir;
}
}  // namespace

std::filesystem::path tiny_model() {
  static std::once_flag once;
  static std::filesystem::path path;
  std::call_once(once, [] {
    path = models_dir() / "tiny.gguf";
    auto r = run_kvsweep({"tiny-model", "-o", path.string(), "--seed", "1"}, 60);
    if (r.exit_code != 0) throw std::runtime_error("kvsweep tiny-model failed: " + r.output);
  });
  return path;
}

std::filesystem::path copy_model() {
  static std::once_flag once;
  static std::filesystem::path path;
  std::call_once(once, [] {
    path = models_dir() / "copy.gguf";
    auto r = run_kvsweep({"tiny-model", "--kind", "copy", "-o", path.string()}, 120);
    if (r.exit_code != 0) throw std::runtime_error("kvsweep tiny-model --kind copy failed: " + r.output);
  });
  return path;
}

TempDir::TempDir() {
  std::string templ = (std::filesystem::temp_directory_path() / "kvsweep-it-XXXXXX").string();
  if (!::mkdtemp(templ.data())) throw std::runtime_error("mkdtemp failed");
  m_path = templ;
}

TempDir::~TempDir() {
  if (std::getenv("KVSWEEP_KEEP_TMP")) return;
  std::error_code ec;
  std::filesystem::remove_all(m_path, ec);
}

Result run_kvsweep(const std::vector<std::string>& args, double timeout_s) {
  return run_kvsweep_with_input(args, {}, timeout_s);
}

Result run_kvsweep_with_input(const std::vector<std::string>& args, const std::string& input, double timeout_s) {
  char templ[] = "/tmp/kvsweep-out-XXXXXX";
  int fd = ::mkstemp(templ);
  ::close(fd);
  char in_templ[] = "/tmp/kvsweep-in-XXXXXX";
  int in_fd = ::mkstemp(in_templ);
  ::close(in_fd);
  std::ofstream(in_templ, std::ios::binary) << input;
  pid_t pid = spawn(args, templ, in_templ);
  Result r;
  r.exit_code = wait_pid(pid, timeout_s);
  r.output = slurp(templ);
  ::unlink(templ);
  ::unlink(in_templ);
  return r;
}

Background::Background(const std::vector<std::string>& args, std::filesystem::path log)
    : m_pid(spawn(args, log)), m_log(std::move(log)) {}

Background::~Background() {
  if (!m_done && m_pid > 0) {
    ::kill(m_pid, SIGKILL);
    ::waitpid(m_pid, nullptr, 0);
  }
}

int Background::wait(double timeout_s) {
  if (!m_done) {
    m_code = wait_pid(m_pid, timeout_s);
    m_done = true;
  }
  return m_code;
}

std::string Background::output() const { return slurp(m_log); }

nlohmann::json base_config(const std::filesystem::path& model) {
  return {
      {"name", "it"},
      {"server",
       {{"backend", "llama-server"},
        {"args", {"-fa", "on", "-t", "1"}},
        {"ctx", 2048},
        {"ready_timeout_s", scaled_s(60)},
        {"request_timeout_s", scaled_s(60)},
        {"stop_grace_s", 2}}},
      {"models", {{{"name", "tiny"}, {"path", model.string()}}}},
      {"grid", {{"k", {"f16", "q8_0", "q4_0"}}, {"v", "same-as-k"}, {"reference", "f16/f16"}, {"seed", 7}}},
      {"probes", {{{"kind", "complete"}, {"max_tokens", 16}}}},
  };
}

nlohmann::json copy_recall_config(const std::vector<std::string>& k_types, int functions, int items, int lines) {
  auto cfg = base_config(copy_model());
  cfg["name"] = "copy";
  cfg["models"] = {{{"name", "copy"}, {"path", copy_model().string()}}};
  cfg["server"]["ctx"] = 6144;
  cfg["grid"] = {{"k", k_types}, {"v", {"f16"}}, {"reference", "f16/f16"}, {"order", "as-listed"}};
  const nlohmann::json bodies = {{"functions", functions}, {"value_len", 4},       {"seed", 42},
                                 {"min_lines", lines},     {"max_lines", lines}};
  cfg["probes"] = {{{"kind", "recall"},
                    {"corpus", {{"random_bodies", bodies}}},
                    {"k", items},
                    {"lines", lines},
                    {"seed", 42},
                    {"mode", "raw"},
                    {"cue", "signature"},
                    {"bonus_lines", 0},
                    {"stop_extra_lines", 1}}};
  return cfg;
}

std::filesystem::path write_config(const TempDir& dir, const nlohmann::json& config, const std::string& name) {
  auto p = dir / name;
  std::ofstream(p) << config.dump(2);
  return p;
}

std::vector<nlohmann::json> read_records(const std::filesystem::path& run_dir) {
  std::vector<nlohmann::json> out;
  std::ifstream in(run_dir / "records.jsonl");
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  return out;
}

std::string read_text(const std::filesystem::path& file) { return slurp(file); }

nlohmann::json read_manifest(const std::filesystem::path& run_dir) {
  return nlohmann::json::parse(slurp(run_dir / "manifest.json"));
}

std::size_t count_lines(const std::filesystem::path& file) {
  std::string s = slurp(file);
  return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n'));
}

std::vector<pid_t> pids_with_arg(const std::string& needle) {
  std::vector<pid_t> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    std::string name = e.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    std::string cmd = slurp(e.path() / "cmdline");
    // Zombies have an empty cmdline; a process state of Z is not "running".
    std::string stat = slurp(e.path() / "stat");
    auto close_paren = stat.rfind(')');
    if (close_paren != std::string::npos && close_paren + 2 < stat.size() && stat[close_paren + 2] == 'Z') continue;
    if (cmd.find(needle) != std::string::npos) out.push_back(static_cast<pid_t>(std::stoi(name)));
  }
  return out;
}

bool wait_until(const std::function<bool()>& pred, double timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s * time_scale());
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return pred();
}

}  // namespace kvsweep::testing

#include "kvsweep/process/child.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>
#include <deque>

#include "kvsweep/core/no_follow.hpp"
#include "kvsweep/core/read_file.hpp"
#include "kvsweep/process/log_pump.hpp"

extern char** environ;

namespace kvsweep::process {

namespace {

// A fixed table of live process-group ids, readable from a signal handler.
constexpr std::size_t kMaxChildren = 64;
std::array<std::atomic<pid_t>, kMaxChildren> g_children{};

void register_child(pid_t pid) {
  for (auto& slot : g_children) {
    pid_t expected = 0;
    if (slot.compare_exchange_strong(expected, pid)) return;
  }
}

void unregister_child(pid_t pid) {
  for (auto& slot : g_children) {
    pid_t expected = pid;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

ExitStatus from_wait_status(int status) {
  ExitStatus s;
  if (WIFSIGNALED(status)) {
    s.signaled = true;
    s.signal = WTERMSIG(status);
  } else {
    s.code = WEXITSTATUS(status);
  }
  return s;
}

/// The group's guard (a fork of the child before its exec, so in its process group): waits for
/// end-of-file on `fd`, which comes when kvsweep has ended, then kills the whole group, itself
/// included. A group stopped by kvsweep takes the guard with it. Async-signal-safe calls only.
[[noreturn]] void guard_group(int fd) {
  if (fd != 3) ::dup2(fd, 3);
  ::close_range(4, ~0U, 0);  // no other pipe's write end, no exec-status pipe: kvsweep's alone
  ::signal(SIGTERM, SIG_IGN);  // a graceful stop is for the server; the guard stays until the end
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGHUP, SIG_IGN);
  char c;
  while (::read(3, &c, 1) < 0 && errno == EINTR) {
  }
  ::kill(0, SIGKILL);
  ::_exit(0);
}

}  // namespace

std::string ExitStatus::describe() const {
  if (signaled) return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  return "exited with code " + std::to_string(code);
}

void kill_all_children(int sig) noexcept {
  for (auto& slot : g_children) {
    pid_t pid = slot.load();
    if (pid > 0) ::kill(-pid, sig);
  }
}

Child::Child(Child&& other) noexcept
    : m_pid(std::exchange(other.m_pid, -1)),
      m_guard_fd(std::exchange(other.m_guard_fd, -1)),
      m_pump(std::move(other.m_pump)),
      m_status(other.m_status) {}

Child& Child::operator=(Child&& other) noexcept {
  if (this != &other) {
    if (m_pid > 0 && !m_status) stop(std::chrono::milliseconds(0));
    release_guard();
    m_pid = std::exchange(other.m_pid, -1);
    m_guard_fd = std::exchange(other.m_guard_fd, -1);
    m_pump = std::move(other.m_pump);
    m_status = other.m_status;
  }
  return *this;
}

Child::~Child() {
  if (m_pid > 0 && !m_status) stop(std::chrono::milliseconds(0));
  release_guard();
}

void Child::release_guard() {
  // Only once the group is dead: closing it earlier would have the guard kill a live server.
  if (m_guard_fd >= 0) ::close(std::exchange(m_guard_fd, -1));
  // The group is dead, so the pipe's end comes at once unless something left the group holds it.
  if (m_pump) m_pump->finish(std::chrono::seconds(2));
}

std::string which(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  const char* path = std::getenv("PATH");
  if (!path) return {};
  std::string p = path;
  std::size_t start = 0;
  while (start <= p.size()) {
    std::size_t end = p.find(':', start);
    if (end == std::string::npos) end = p.size();
    std::string dir = p.substr(start, end - start);
    if (dir.empty()) dir = ".";
    std::string candidate = dir + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return {};
}

std::string find_tool(const std::string& name, const char* dir_variable) {
  if (name.find('/') != std::string::npos) return name;
  if (const char* dir = std::getenv(dir_variable); dir && *dir) {
    const std::filesystem::path p = std::filesystem::path(dir) / name;
    if (::access(p.c_str(), X_OK) == 0) return p.string();
  }
  return which(name);
}

std::string find_llama_tool(const std::string& name) { return find_tool(name, "KVSWEEP_LLAMA_BIN"); }

// One function on purpose (~108 lines): what runs between fork and exec must stay async-signal-safe, beside what it uses.
core::Expected<Child> Child::spawn(const LaunchSpec& spec) {
  if (spec.argv.empty()) return core::fail(core::ErrorKind::invalid, "empty argv");
  std::string exe = which(spec.argv[0]);
  if (exe.empty()) {
    return core::fail(core::ErrorKind::process, "'" + spec.argv[0] + "' not found on PATH");
  }
  if (::access(exe.c_str(), X_OK) != 0) {
    return core::fail(core::ErrorKind::process, "'" + exe + "' is not executable: " + std::strerror(errno));
  }

  // Everything the child needs is prepared before fork: after fork only
  // async-signal-safe calls are allowed (we may have other threads).
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    std::string_view kv(*e);
    std::string_view key = kv.substr(0, kv.find('='));
    bool drop = false;
    for (const auto& u : spec.unset_env) drop = drop || key == u;
    for (const auto& [k, v] : spec.env) drop = drop || key == k;
    if (!drop) env_strings.emplace_back(kv);
  }
  for (const auto& [k, v] : spec.env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = spec.argv;
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  int log_fd = -1;
  if (!spec.log_path.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(spec.log_path.parent_path(), ec);
    log_fd = core::open_no_follow(spec.log_path, O_WRONLY | O_CREAT | O_APPEND);
    if (log_fd < 0) return core::fail(core::ErrorKind::io, core::open_failure(spec.log_path));
  }
  // The child writes into a pipe, never into its log: kvsweep redacts each line on its way there.
  int out_pipe[2] = {-1, -1};
  if (log_fd >= 0 && ::pipe2(out_pipe, O_CLOEXEC) != 0) {
    ::close(log_fd);
    return core::fail(core::ErrorKind::process, std::string("pipe: ") + std::strerror(errno));
  }
  auto pump = log_fd >= 0 ? std::make_unique<LogPump>(out_pipe[0], log_fd) : nullptr;
  const int out_fd = out_pipe[1];
  // A pipe that closes on exec tells the parent whether exec succeeded.
  int err_pipe[2];
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    if (out_fd >= 0) ::close(out_fd);
    return core::fail(core::ErrorKind::process, std::string("pipe: ") + std::strerror(errno));
  }
  // The group's guard reads the other end of this pipe; only kvsweep holds the write end, so it
  // reads end-of-file exactly when kvsweep is gone, however it ended (kill -9 included).
  int guard_pipe[2];
  if (::pipe2(guard_pipe, O_CLOEXEC) != 0) {
    if (out_fd >= 0) ::close(out_fd);
    ::close(err_pipe[0]);
    ::close(err_pipe[1]);
    return core::fail(core::ErrorKind::process, std::string("pipe: ") + std::strerror(errno));
  }
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    if (out_fd >= 0) ::close(out_fd);
    for (int fd : {err_pipe[0], err_pipe[1], guard_pipe[0], guard_pipe[1]}) ::close(fd);
    return core::fail(core::ErrorKind::process, std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGPIPE, SIG_DFL);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    if (out_fd >= 0) {
      ::dup2(out_fd, 1);
      ::dup2(out_fd, 2);
    }
    // Descriptors another thread opened without O_CLOEXEC (a parallel cell's HTTP sockets)
    // must not live on in this child: a server holding a socket of another would keep it open.
    ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
    // PR_SET_PDEATHSIG reaches this process only: what a wrapper script starts would outlive a
    // kvsweep killed with SIGKILL. The guard, a second process in the group, kills the group then.
    if (::fork() == 0) guard_group(guard_pipe[0]);
    ::execve(exe.c_str(), argv.data(), envp.data());
    int e = errno;
    [[maybe_unused]] auto n = ::write(err_pipe[1], &e, sizeof e);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also from the parent, so the group exists before we signal it
  if (out_fd >= 0) ::close(out_fd);
  ::close(err_pipe[1]);
  ::close(guard_pipe[0]);
  int child_errno = 0;
  ssize_t n = ::read(err_pipe[0], &child_errno, sizeof child_errno);
  ::close(err_pipe[0]);
  if (n == static_cast<ssize_t>(sizeof child_errno)) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    ::kill(-pid, SIGKILL);  // the guard
    ::close(guard_pipe[1]);
    return core::fail(core::ErrorKind::process, "cannot exec '" + exe + "': " + std::strerror(child_errno));
  }
  register_child(pid);
  Child c;
  c.m_pid = pid;
  c.m_guard_fd = guard_pipe[1];
  c.m_pump = std::move(pump);
  return c;
}

std::optional<ExitStatus> Child::poll() {
  if (m_status || m_pid <= 0) return m_status;
  int status = 0;
  pid_t r = ::waitpid(m_pid, &status, WNOHANG);
  if (r == m_pid) {
    m_status = from_wait_status(status);
    // The leader is gone; make sure nothing else of its group lingers (the guard included).
    ::kill(-m_pid, SIGKILL);
    unregister_child(m_pid);
    release_guard();
  }
  return m_status;
}

void Child::signal_group(int sig) const {
  if (m_pid > 0 && !m_status) ::kill(-m_pid, sig);
}

ExitStatus Child::stop(std::chrono::milliseconds grace) {
  if (m_pid <= 0) return {};
  if (poll()) return *m_status;
  if (grace.count() > 0) {
    ::kill(-m_pid, SIGTERM);
    ::kill(-m_pid, SIGCONT);  // a stopped (SIGSTOP) server cannot act on SIGTERM
    auto deadline = std::chrono::steady_clock::now() + grace;
    while (std::chrono::steady_clock::now() < deadline) {
      if (poll()) return *m_status;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  ::kill(-m_pid, SIGKILL);
  int status = 0;
  ::waitpid(m_pid, &status, 0);
  m_status = from_wait_status(status);
  unregister_child(m_pid);
  release_guard();
  return *m_status;
}

std::string tail_file(const std::filesystem::path& path, std::size_t max_lines) {
  constexpr std::uintmax_t kTailBytes = 64 * 1024;
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  const std::size_t start = ec || size < kTailBytes ? 0 : static_cast<std::size_t>(size - kTailBytes);
  const std::optional<std::string> read = core::read_file(path, core::Links::refuse, start);
  if (!read) return {};
  const std::string& data = *read;
  std::deque<std::string> lines;
  std::size_t pos = 0;
  while (pos < data.size()) {
    std::size_t nl = data.find('\n', pos);
    if (nl == std::string::npos) nl = data.size();
    lines.emplace_back(data.substr(pos, nl - pos));
    if (lines.size() > max_lines) lines.pop_front();
    pos = nl + 1;
  }
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

}  // namespace kvsweep::process


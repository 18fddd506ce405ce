#pragma once
/// Test helper: a full disk, made by the kernel rather than a fake. RLIMIT_FSIZE is lowered so
/// that a write past `room` bytes of any file fails (EFBIG) the way one fails on a full disk.

#include <signal.h>
#include <sys/resource.h>

#include <cstdint>

namespace kvsweep::testing {

/// Lowers the file-size limit so that the next append cannot fit, as on a full disk; restored
/// (space freed) at scope end. SIGXFSZ is ignored so the write fails with EFBIG instead.
class FullDisk {
 public:
  explicit FullDisk(std::uintmax_t room) {
    ::getrlimit(RLIMIT_FSIZE, &m_saved);
    m_old_handler = ::signal(SIGXFSZ, SIG_IGN);
    rlimit limited = m_saved;
    limited.rlim_cur = static_cast<rlim_t>(room);
    ::setrlimit(RLIMIT_FSIZE, &limited);
  }
  ~FullDisk() {
    ::setrlimit(RLIMIT_FSIZE, &m_saved);
    ::signal(SIGXFSZ, m_old_handler);
  }

 private:
  rlimit m_saved{};
  sighandler_t m_old_handler;
};

}  // namespace kvsweep::testing

#pragma once
/// The one place that starts child processes: a Launcher hands out Processes, so the server
/// lifecycle can be driven by real children (ChildLauncher) or, in unit tests, by a fake.

#include <chrono>
#include <memory>
#include <optional>

#include "kvsweep/core/error.hpp"
#include "kvsweep/process/child.hpp"

namespace kvsweep::process {

/// A launched child as its owner sees it.
class Process {
 public:
  virtual ~Process() = default;
  /// How it ended, once it has (non-blocking).
  virtual std::optional<ExitStatus> poll() = 0;
  /// SIGTERM, wait up to `grace`, then SIGKILL; returns how it ended.
  virtual ExitStatus stop(std::chrono::milliseconds grace) = 0;
};

class Launcher {
 public:
  virtual ~Launcher() = default;
  virtual core::Expected<std::unique_ptr<Process>> launch(const LaunchSpec& spec) = 0;
};

/// Real children (process::Child): their own process group, output appended to the log.
class ChildLauncher final : public Launcher {
 public:
  core::Expected<std::unique_ptr<Process>> launch(const LaunchSpec& spec) override;
};

/// The process-wide ChildLauncher.
Launcher& child_launcher();

}  // namespace kvsweep::process

#pragma once
/// ToolRunner: runs a command-line tool (llama-perplexity) to completion and hands back its exit
/// status and output; the seam unit tests replace with canned output.

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kvsweep/core/error.hpp"
#include "kvsweep/process/child.hpp"

namespace kvsweep::process {

/// How one tool run ended and what it printed (stdout and stderr together).
struct ToolRun {
  ExitStatus status;
  std::string output;
};

/// Runs a command-line tool to completion (the seam unit tests replace with canned output).
class ToolRunner {
 public:
  using Env = std::vector<std::pair<std::string, std::string>>;
  virtual ~ToolRunner() = default;
  /// Runs `argv` with `env` added to its environment (the cell's slot, e.g. its GPU) and
  /// stdout and stderr appended to `log`; a run past `timeout` is killed and is a process error.
  virtual core::Expected<ToolRun> run(const std::vector<std::string>& argv, const Env& env,
                                      const std::filesystem::path& log, std::chrono::seconds timeout) = 0;
};

/// The real runner: process::Child in its own process group.
std::shared_ptr<ToolRunner> process_tool_runner();

}  // namespace kvsweep::process

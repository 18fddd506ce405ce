#pragma once
/// A process::ToolRunner a unit test scripts: it runs nothing, records every call (argv, environment,
/// log, timeout) and answers with `exit_code` (or death by `kill_signal`) and `output`, or the call's entry of `outputs` when the
/// test queues one per call; act() may do what the real tool would to the files it was given.
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "kvsweep/core/error.hpp"
#include "kvsweep/process/tool_runner.hpp"

namespace kvsweep::testing {

class FakeToolRunner : public process::ToolRunner {
 public:
  core::Expected<process::ToolRun> run(const std::vector<std::string>& argv, const Env& env,
                                       const std::filesystem::path& log, std::chrono::seconds timeout) override {
    calls.push_back(argv);
    envs.push_back(env);
    logs.push_back(log);
    timeouts.push_back(timeout);
    act(argv);
    process::ToolRun r;
    r.status.code = exit_code;
    if (kill_signal != 0) {
      r.status.signaled = true;
      r.status.signal = kill_signal;
    }
    r.output = outputs.empty() ? output : outputs.at(calls.size() - 1);
    return r;
  }
  std::string output;
  std::vector<std::string> outputs;
  std::vector<std::vector<std::string>> calls;
  std::vector<Env> envs;
  std::vector<std::filesystem::path> logs;
  std::vector<std::chrono::seconds> timeouts;
  int exit_code = 0;
  int kill_signal = 0;  // non-zero: the tool was killed by this signal (exit_code is then not used)

 protected:
  virtual void act(const std::vector<std::string>& /*argv*/) {}
};

}  // namespace kvsweep::testing

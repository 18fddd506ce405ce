/// process_tool_runner: ToolRunner over Child, with a timeout.

#include "kvsweep/process/tool_runner.hpp"

#include <optional>
#include <thread>

#include "kvsweep/core/read_file.hpp"

namespace kvsweep::process {

namespace {

class ProcessToolRunner final : public ToolRunner {
 public:
  core::Expected<ToolRun> run(const std::vector<std::string>& argv, const Env& env, const std::filesystem::path& log,
                              std::chrono::seconds timeout) override {
    std::error_code ec;
    std::filesystem::create_directories(log.parent_path(), ec);
    const auto size = std::filesystem::file_size(log, ec);
    const std::uintmax_t start = ec ? 0 : size;
    LaunchSpec spec;
    spec.argv = argv;
    spec.env = env;
    spec.log_path = log;
    auto child = Child::spawn(spec);
    if (!child) return std::unexpected(child.error());
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::optional<ExitStatus> status;
    while (!(status = child->poll())) {
      if (std::chrono::steady_clock::now() > deadline) {
        child->stop(std::chrono::seconds(5));
        // A process error, not a timeout: a timeout would tell the runner the server is wedged.
        return core::fail(core::ErrorKind::process, argv.front() + " ran past " + std::to_string(timeout.count()) +
                                                        " s (timeout_s) and was killed; its output is in " + log.string());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return ToolRun{*status, core::read_file(log, core::Links::refuse, start).value_or("")};
  }
};

}  // namespace

std::shared_ptr<ToolRunner> process_tool_runner() { return std::make_shared<ProcessToolRunner>(); }

}  // namespace kvsweep::process

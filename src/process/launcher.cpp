#include "kvsweep/process/launcher.hpp"

namespace kvsweep::process {

namespace {

class ChildProcess final : public Process {
 public:
  explicit ChildProcess(Child child) : m_child(std::move(child)) {}
  std::optional<ExitStatus> poll() override { return m_child.poll(); }
  ExitStatus stop(std::chrono::milliseconds grace) override { return m_child.stop(grace); }

 private:
  Child m_child;
};

}  // namespace

core::Expected<std::unique_ptr<Process>> ChildLauncher::launch(const LaunchSpec& spec) {
  auto child = Child::spawn(spec);
  if (!child) return std::unexpected(child.error());
  return std::make_unique<ChildProcess>(std::move(*child));
}

Launcher& child_launcher() {
  static ChildLauncher launcher;
  return launcher;
}

}  // namespace kvsweep::process

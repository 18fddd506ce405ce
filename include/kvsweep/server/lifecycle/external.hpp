#pragma once
/// The external backend: attach to a server that is already running at a URL; nothing is
/// launched. Its model and context are checked against the cell (/props), its K/V types read from
/// the log file the user names (server.log), else recorded as declared, unverified (kv_unverified).
/// One server is one cell: a second cell attaching to the same URL in one invocation is refused.

#include <string>

#include "kvsweep/server/lifecycle/attach_verify.hpp"
#include "kvsweep/server/backend.hpp"
#include "kvsweep/server/lifecycle/lifecycle.hpp"
#include "kvsweep/server/llama/llama_server.hpp"

namespace kvsweep::server {

struct ExternalOptions {
  std::string url;          // e.g. http://127.0.0.1:8080
  std::string api_key_env;  // name of the environment variable holding the key ("" = none)
  std::string user;         // basic auth, from the URL's userinfo (the url holds none)
  std::string password;
  std::string log;          // server.log: the attached server's log file, for the K/V types it allocated
};

class ExternalBackend final : public Backend {
 public:
  explicit ExternalBackend(ExternalOptions options, ReadyProbe& probe = http_ready_probe())
      : m_options(std::move(options)), m_lifecycle(process::child_launcher(), probe) {}
  std::string kind() const override { return "external"; }
  std::expected<std::unique_ptr<Instance>, StartFailure> start(const CellSpec& spec,
                                                             const std::atomic<bool>& cancel) override;
  nlohmann::json describe() override;

 private:
  ExternalOptions m_options;
  LlamaServerFlavour m_flavour{LlamaServerOptions{}};
  Lifecycle m_lifecycle;
  OneServerOneCell m_cells;
};

}  // namespace kvsweep::server

#include "kvsweep/server/lifecycle/external.hpp"

namespace kvsweep::server {

std::expected<std::unique_ptr<Instance>, StartFailure> ExternalBackend::start(const CellSpec& spec,
                                                                             const std::atomic<bool>& cancel) {
  // One running server is one K/V setting: never a second cell under another name.
  if (auto refused = m_cells.claim(m_options.url, spec)) return std::unexpected(std::move(*refused));
  auto key = api_key_from_env(m_options.api_key_env);
  if (!key) return std::unexpected(key.error());
  return m_lifecycle.attach(m_flavour, Attach{m_options.url, {*key, m_options.user, m_options.password}, m_options.log},
                            spec, cancel);
}

nlohmann::json ExternalBackend::describe() {
  return {{"backend", "external"}, {"url", m_options.url}, {"api_key_env", m_options.api_key_env}};
}

}  // namespace kvsweep::server

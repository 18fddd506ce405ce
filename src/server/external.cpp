#include "kvsweep/server/external.hpp"

namespace kvsweep::server {

std::expected<std::unique_ptr<Instance>, StartFailure> ExternalBackend::start(const CellSpec& spec,
                                                                             const std::atomic<bool>& cancel) {
  {
    // One running server is one K/V setting: a second cell attached to it would be the first one
    // measured again, under another name (it compared a server with itself).
    std::lock_guard lock(m_mutex);
    const auto [at, first] = m_cell_at.try_emplace(m_options.url, spec.label());
    if (!first && at->second != spec.label())
      return std::unexpected(StartFailure{
          CellOutcome::config_mismatch,
          "the server at " + m_options.url + " already answered as " + at->second +
              " in this run; one running server is one cell, not two (it would be compared with itself): restart it "
              "with -ctk " + spec.type_k + " -ctv " + spec.type_v + " and run kvsweep run --resume <run> --only " +
              spec.types(),
          "",
          {}});
  }
  auto key = api_key_from_env(m_options.api_key_env);
  if (!key) return std::unexpected(key.error());
  return m_lifecycle.attach(m_flavour, Attach{m_options.url, {*key, m_options.user, m_options.password}, m_options.log},
                            spec, cancel);
}

nlohmann::json ExternalBackend::describe() {
  return {{"backend", "external"}, {"url", m_options.url}, {"api_key_env", m_options.api_key_env}};
}

}  // namespace kvsweep::server

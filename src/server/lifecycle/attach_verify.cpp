#include "kvsweep/server/lifecycle/attach_verify.hpp"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <system_error>

#include "kvsweep/server/openai/openai_api.hpp"

namespace kvsweep::server {

namespace {

std::string text_of(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_string()) return "";
  return j[key].get<std::string>();
}

int count_of(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number_integer()) return 0;
  const auto n = j[key].get<long long>();
  return n > 0 && n < (1LL << 31) ? static_cast<int>(n) : 0;
}

/// The port of `url` ("http://127.0.0.1:8080/prefix" → "8080"; the scheme's default without one).
std::string port_of(const std::string& url) {
  const std::size_t scheme = url.find("://");
  const std::size_t host = scheme == std::string::npos ? 0 : scheme + 3;
  const std::size_t end = url.find('/', host);
  const std::string authority = url.substr(host, end == std::string::npos ? std::string::npos : end - host);
  // [::1]:8080: the port follows the bracket.
  const std::size_t bracket = authority.rfind(']');
  const std::size_t colon = authority.rfind(':');
  if (colon != std::string::npos && (bracket == std::string::npos || colon > bracket)) return authority.substr(colon + 1);
  return url.rfind("https://", 0) == 0 ? "443" : "80";
}

/// Whether the two paths name one model: the same file here, a file of the same name and size, or,
/// when the server's path is not on this machine, the same file name.
bool same_model(const std::string& served, const std::string& configured) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path a(served), b(configured);
  if (a.filename() != b.filename()) return false;
  if (!fs::exists(a, ec)) return true;  // another machine's path: only its name can be compared
  if (fs::equivalent(a, b, ec)) return true;
  std::error_code ea, eb;
  const auto sa = fs::file_size(a, ea), sb = fs::file_size(b, eb);
  return !ea && !eb && sa == sb;
}

}  // namespace

AttachedProps read_props(const nlohmann::json& props) {
  AttachedProps p;
  p.model_path = text_of(props, "model_path");
  p.model_ftype = text_of(props, "model_ftype");
  p.build_info = text_of(props, "build_info");
  p.total_slots = count_of(props, "total_slots");
  if (props.is_object() && props.contains("default_generation_settings"))
    p.n_ctx = count_of(props["default_generation_settings"], "n_ctx");
  return p;
}

std::string props_mismatch(const AttachedProps& props, const CellSpec& spec) {
  if (props.model_path.empty())
    return "its /props names no model_path, so the model it serves cannot be checked against models[].path '" +
           spec.model_path + "'";
  if (!same_model(props.model_path, spec.model_path))
    return "it serves '" + props.model_path + "' (/props model_path), the config names '" + spec.model_path + "'";
  if (props.n_ctx > 0 && props.n_ctx < spec.n_ctx)
    return "its slot context is " + std::to_string(props.n_ctx) + " tokens (/props), the cell needs " +
           std::to_string(spec.n_ctx) + " (start it with -c " + std::to_string(spec.n_ctx * std::max(props.total_slots, 1)) +
           " or lower server.ctx)";
  return "";
}

std::string last_start(const std::string& log) {
  std::size_t at = std::string::npos;
  for (const char* marker : {"llama_server: initializing", "main: build"}) {
    const std::size_t found = log.rfind(marker);
    if (found != std::string::npos && (at == std::string::npos || found > at)) at = found;
  }
  if (at == std::string::npos) return log;
  const std::size_t line = log.rfind('\n', at);
  return log.substr(line == std::string::npos ? 0 : line + 1);
}

std::expected<EffectiveKv, std::string> effective_from_log(const std::string& log, const std::string& log_path,
                                                           const std::string& url, const AttachedProps& props) {
  const std::string start = last_start(log);
  const std::string where = "server.log '" + log_path + "'";
  const std::string port = port_of(url);
  static const std::regex listening(R"(listening on https?://\S*:([0-9]+))");
  bool on_port = false;
  for (auto it = std::sregex_iterator(start.begin(), start.end(), listening); it != std::sregex_iterator(); ++it)
    on_port = on_port || (*it)[1].str() == port;
  if (!on_port)
    return std::unexpected(where + ": its last start does not say it listens on port " + port + " of " + url +
                           " (is it this server's log, and has the server started?)");
  EffectiveKv e = parse_effective_kv(start);
  if (!e.found)
    return std::unexpected(where + ": its last start holds no llama_kv_cache line with the K/V types (start the server "
                           "with -lv 4 or higher, its output into this file)");
  if (props.n_ctx > 0 && e.n_ctx > 0 && e.n_ctx < props.n_ctx)
    return std::unexpected(where + ": its last start allocated n_ctx " + std::to_string(e.n_ctx) + ", the server says " +
                           std::to_string(props.n_ctx) + " per slot (/props): the log is of another start");
  return e;
}

std::string served_model_mismatch(const std::vector<std::string>& ids, const std::string& asked,
                                  const std::string& configured) {
  if (ids.empty()) return "";
  std::string listed;
  for (const auto& id : ids) {
    if (!asked.empty() ? id == asked : (id == configured || model_stem(id) == model_stem(configured))) return "";
    listed += (listed.empty() ? "'" : ", '") + id + "'";
  }
  return "it serves " + listed + " (GET /v1/models), " +
         (asked.empty() ? "the config names '" + configured + "'" : "server.openai.model names '" + asked + "'");
}

std::optional<StartFailure> OneServerOneCell::claim(const std::string& url, const CellSpec& spec) {
  std::lock_guard lock(m_mutex);
  const auto [at, first] = m_cell_at.try_emplace(url, spec.label());
  if (first || at->second == spec.label()) return std::nullopt;
  return StartFailure{CellOutcome::config_mismatch,
                      "the server at " + url + " already answered as " + at->second +
                          " in this run; one running server is one cell, not two (it would be compared with itself): "
                          "restart it with the types of " + spec.types() + " and run kvsweep run --resume <run> --only cell=" +
                          spec.types(),
                      "",
                      {}};
}

}  // namespace kvsweep::server

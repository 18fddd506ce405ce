#include "kvsweep/server/ollama/ollama.hpp"

#include <algorithm>
#include <cstdlib>
#include <regex>

#include "kvsweep/process/child.hpp"
#include "kvsweep/server/ollama/ollama_load_options.hpp"

// OllamaFlavour's readiness (import, tag, warm-up) and OllamaBackend: launch or attach, the
// inventory a dry run asks for, the description.

namespace kvsweep::server {

std::expected<void, ReadyFailure> OllamaFlavour::check_tags(ReadyContext& context) const {
  nlohmann::json present = nlohmann::json::object();
  for (const auto& tag : m_check_only) {
    auto show = context.client.post_for_json("/api/show", {{"model", tag}});
    if (!show && show.error().http_status != 404)
      return std::unexpected(ReadyFailure{"while answering /api/show", "model '" + tag + "': " + show.error().message,
                                          CellOutcome::load_failed});
    present[tag] = show.has_value();
  }
  context.info["models"] = present;
  return {};
}

std::expected<void, ReadyFailure> OllamaFlavour::after_ready(ReadyContext& context) const {
  auto& info = context.info;
  try {
    info["version"] = nlohmann::json::parse(context.ready_body).value("version", "");
  } catch (const std::exception&) {
    info["version"] = "";
  }
  if (m_checking) return check_tags(context);
  auto& client = context.client;
  // 0. A GGUF file is imported into kvsweep's store (the first cell of a run; later ones find it).
  if (auto import = ollama_import_for(context.spec.model_path); import && !context.attached) {
    const std::string when = "while importing " + context.spec.model_path + " (ollama create)";
    if (!*import) return std::unexpected(ReadyFailure{when, import->error().message, CellOutcome::load_failed});
    auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(context.deadline - std::chrono::steady_clock::now());
    client.set_read_timeout(std::max(remaining, std::chrono::milliseconds(1000)));
    auto imported = ollama_ensure_import(client, **import, ollama_store_for(context.spec));
    client.set_read_timeout(context.spec.request_timeout);
    if (!imported)
      return std::unexpected(ReadyFailure{when, "importing " + context.spec.model_path + " as " + (*import)->tag +
                                                    " failed: " + imported.error().message,
                                          CellOutcome::load_failed});
    info["gguf"] = context.spec.model_path;
    info["gguf_sha256"] = (*import)->sha256;
    info["imported"] = *imported;  // false: an earlier cell (or run) imported it
  }
  const OllamaModelOptions model = model_options(context.spec, context.attached);
  // 1. The tag exists.
  auto show = client.post_for_json("/api/show", {{"model", model.model}});
  if (!show) {
    std::string msg = "model '" + model.model + "': " + show.error().message;
    if (show.error().http_status == 404) {
      msg += context.attached ? "; pull it on that server (ollama pull " + model.model + ")"
                              : "; pull it (ollama pull " + model.model +
                                    "), or set server.env.OLLAMA_MODELS to the model store that holds it";
    }
    return std::unexpected(ReadyFailure{"while answering /api/show", msg, CellOutcome::load_failed});
  }
  info["model"] = model.model;
  info["details"] = show->value("details", nlohmann::json::object());
  info["capabilities"] = show->value("capabilities", nlohmann::json::array());
  if (show->contains("modified_at")) info["modified_at"] = (*show)["modified_at"];

  // 2. Warm: models load lazily; load it now, with the num_ctx every request will send, so no
  //    timed request pays for the load and none triggers a reload.
  auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(context.deadline - std::chrono::steady_clock::now());
  client.set_read_timeout(std::max(remaining, std::chrono::milliseconds(1000)));
  // An embedding-only model refuses /api/generate ("does not support generate"): load it with a
  // one-line /api/embed instead (an empty input may answer without loading).
  bool completion = true;
  if (const auto caps = info["capabilities"]; caps.is_array() && !caps.empty()) {
    completion = std::find(caps.begin(), caps.end(), "completion") != caps.end() ||
                 std::find(caps.begin(), caps.end(), "embedding") == caps.end();
  }
  auto warm = completion ? client.post_for_json("/api/generate", {{"model", model.model},
                                                                  {"stream", false},
                                                                  {"keep_alive", model.keep_alive},
                                                                  {"options", ollama_load_options(model)}})
                         : client.post_for_json("/api/embed", ollama_embed_body({"kvsweep warm-up"}, model));
  client.set_read_timeout(context.spec.request_timeout);
  if (!warm)
    return std::unexpected(ReadyFailure{"while loading " + model.model,
                                        "loading " + model.model + " failed: " + warm.error().message, std::nullopt});
  if (!context.attached) info["kv_types"] = "from the server log";
  return {};
}

EffectiveKv OllamaFlavour::effective(const std::string& log, const CellSpec& spec) const {
  return ollama_effective_kv(log, spec);
}

std::unique_ptr<Api> OllamaFlavour::make_api(std::shared_ptr<http::Client> client, const CellSpec& spec) const {
  return std::make_unique<OllamaApi>(std::move(client), model_options(spec, m_attached));
}

OllamaModelOptions OllamaFlavour::model_options(const CellSpec& spec, bool attached) {
  OllamaModelOptions o{spec.model_path, spec.n_ctx, attached ? nlohmann::json("30m") : nlohmann::json(-1), false, {}};
  if (attached) return o;
  o.use_mmap = true;  // see OllamaModelOptions::use_mmap
  if (auto import = ollama_import_for(spec.model_path); import && *import) o.model = (*import)->tag;
  return o;
}

std::expected<std::unique_ptr<Instance>, StartFailure> OllamaBackend::start(const CellSpec& spec,
                                                                           const std::atomic<bool>& cancel) {
  if (spec.type_k != spec.type_v) {
    // The config rejects such grids; a direct caller gets the same reason.
    return std::unexpected(StartFailure{CellOutcome::unsupported,
                                        "Ollama has one KV cache type for K and V (OLLAMA_KV_CACHE_TYPE); K=" + spec.type_k +
                                            " V=" + spec.type_v + " cannot be run",
                                        "", {}});
  }
  if (m_options.url.empty()) return m_lifecycle.launch(m_flavour, spec, cancel);
  auto key = api_key_from_env(m_options.api_key_env);
  if (!key) return std::unexpected(key.error());
  Attach attach;
  attach.url = m_options.url;
  attach.credentials = {*key, m_options.user, m_options.password};
  return m_lifecycle.attach(m_flavour, attach, spec, cancel);
}

std::expected<OllamaInventory, StartFailure> OllamaBackend::check_models(const CellSpec& base,
                                                                          const std::vector<std::string>& tags,
                                                                          const std::atomic<bool>& cancel) {
  OllamaFlavour flavour(m_options.binary, tags);
  auto instance = m_lifecycle.launch(flavour, base, cancel);
  if (!instance) return std::unexpected(instance.error());
  const nlohmann::json info = (*instance)->info();
  (*instance)->stop();
  OllamaInventory out;
  out.version = info.value("version", "");
  for (const auto& tag : tags) out.tags.emplace_back(tag, info.contains("models") && info["models"].value(tag, false));
  return out;
}

nlohmann::json OllamaBackend::describe() {
  if (!m_options.url.empty()) {
    nlohmann::json d = {{"backend", "external"}, {"api", "ollama"}, {"url", m_options.url},
                        {"api_key_env", m_options.api_key_env}};
    http::Client c(m_options.url, http::Timeouts{std::chrono::milliseconds(1000), std::chrono::milliseconds(2000)});
    const char* key = m_options.api_key_env.empty() ? nullptr : std::getenv(m_options.api_key_env.c_str());
    http::Credentials{key ? key : "", m_options.user, m_options.password}.apply(c);
    if (auto v = c.get_json("/api/version")) d["version"] = v->value("version", "");
    return d;
  }
  if (!m_description.is_null()) return m_description;
  // `ollama --version` also asks the server at OLLAMA_HOST for its version; point it at a port
  // nobody listens on so the answer is the binary's own ("client version is X" when no server answers).
  std::string text = m_lifecycle.version_output(
      {{m_options.binary, "--version"}, {{"OLLAMA_HOST", "127.0.0.1:" + std::to_string(free_port())}}, {}, {}});
  nlohmann::json d = {{"backend", "ollama"}, {"binary", process::which(m_options.binary)}};
  static const std::regex version_re(R"(version is (\S+))");
  std::smatch m;
  if (std::regex_search(text, m, version_re)) d["version"] = m[1].str();
  // Ollama >= 0.30 launches the llama-server in <bin>/../lib/ollama/ (scripts/ollama links this
  // checkout's build there): which one is part of what the cells ran.
  std::error_code ec;
  const std::string bin = d["binary"].get<std::string>();
  if (!bin.empty()) {
    const auto exe = std::filesystem::canonical(bin, ec);
    const auto server = std::filesystem::canonical(exe.parent_path().parent_path() / "lib" / "ollama" / "llama-server", ec);
    if (!ec) d["llama_server"] = server.string();
  }
  m_description = d;
  return d;
}

}  // namespace kvsweep::server

#include "kvsweep/server/ollama.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <regex>

#include "kvsweep/core/cache_types.hpp"
#include "kvsweep/core/host.hpp"
#include "kvsweep/core/read_file.hpp"
#include "kvsweep/process/child.hpp"
#include "kvsweep/server/server_env.hpp"
#include "kvsweep/server/token_logprobs.hpp"

extern char** environ;

namespace kvsweep::server {

namespace {

constexpr double kNsPerMs = 1e6;

// The variables kvsweep owns per cell; the config refuses them in server.env.
constexpr const char* kOwnedEnv[] = {"OLLAMA_HOST", "OLLAMA_KV_CACHE_TYPE", "OLLAMA_FLASH_ATTENTION", "OLLAMA_NUM_PARALLEL",
                                     "OLLAMA_CONTEXT_LENGTH"};

double ns_to_ms(const nlohmann::json& body, const char* key) {
  const auto it = body.find(key);
  if (it == body.end() || !it->is_number()) return 0;
  return it->get<double>() / kNsPerMs;
}

std::vector<std::string> environment_names() {
  std::vector<std::string> names;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    names.emplace_back(kv.substr(0, kv.find('=')));
  }
  return names;
}

}  // namespace

core::Expected<OllamaRequest> ollama_completion_request(const CompletionRequest& r, const OllamaModelOptions& model) {
  if (!r.tokens.empty() && r.messages.empty()) {
    return core::fail(core::ErrorKind::unsupported,
                      "a token-array prompt is not supported by this backend (Ollama takes text prompts only)");
  }
  if (r.n_probs > kOllamaMaxTopLogprobs) {
    return core::fail(core::ErrorKind::unsupported, "Ollama returns at most " + std::to_string(kOllamaMaxTopLogprobs) +
                                                        " log-probabilities per token; " + std::to_string(r.n_probs) +
                                                        " were asked for");
  }
  nlohmann::json options = {
      {"temperature", r.temperature}, {"seed", r.seed},   {"num_ctx", model.num_ctx}, {"num_predict", r.n_predict},
      {"top_k", r.top_k},             {"top_p", r.top_p}, {"min_p", r.min_p},
  };
  if (!r.stop.empty()) options["stop"] = r.stop;
  OllamaRequest out;
  nlohmann::json& body = out.body;
  body = {{"model", model.model}, {"stream", false}, {"think", model.think}, {"keep_alive", model.keep_alive}};
  if (!r.messages.empty()) {
    out.path = "/api/chat";
    nlohmann::json msgs = nlohmann::json::array();
    for (const auto& m : r.messages) msgs.push_back({{"role", m.role}, {"content", m.content}});
    body["messages"] = msgs;
  } else {
    out.path = "/api/generate";
    body["prompt"] = r.prompt;
    // raw: the prompt is the whole input, as llama-server's /completion takes it.
    body["raw"] = true;
  }
  if (r.n_probs > 0) {
    body["logprobs"] = true;
    body["top_logprobs"] = r.n_probs;
  }
  // extra is written for llama-server; carry over what has an Ollama meaning.
  for (auto it = r.extra.begin(); it != r.extra.end(); ++it) {
    if (it.key() == "chat_template_kwargs") {
      if (it->is_object() && it->contains("enable_thinking") && (*it)["enable_thinking"].is_boolean())
        body["think"] = (*it)["enable_thinking"];
    } else if (it.key() == "options" && it->is_object()) {
      for (auto o = it->begin(); o != it->end(); ++o) options[o.key()] = o.value();
    } else {
      body[it.key()] = it.value();  // tools, format, system, think, …; unknown fields are ignored by Ollama
    }
  }
  // num_ctx (and use_mmap) stay the cell's: a different value would reload the model mid-cell.
  options["num_ctx"] = model.num_ctx;
  if (model.use_mmap) options["use_mmap"] = *model.use_mmap;
  body["options"] = options;
  return out;
}

core::Expected<CompletionResponse> parse_ollama_completion(const nlohmann::json& body, bool chat) {
  try {
    CompletionResponse r;
    if (chat) {
      const auto& msg = body.at("message");
      if (msg.contains("content") && msg["content"].is_string()) r.content = msg["content"].get<std::string>();
      if (msg.contains("thinking") && msg["thinking"].is_string()) r.reasoning = msg["thinking"].get<std::string>();
      if (msg.contains("tool_calls")) r.tool_calls = msg["tool_calls"];
    } else {
      r.content = body.at("response").get<std::string>();
      if (body.contains("thinking") && body["thinking"].is_string()) r.reasoning = body["thinking"].get<std::string>();
    }
    // Ollama says "length" only for llama-server's stop_type "limit"; every other end is "stop".
    std::string reason = body.value("done_reason", "");
    r.stop_type = reason == "length" ? "limit" : (reason == "stop" ? "eos" : "none");
    // prompt_eval_count counts cached prompt tokens too (>= 0.30); the cached share is not reported.
    r.timings.prompt_n = body.value("prompt_eval_count", 0);
    r.timings.cache_n = 0;
    r.timings.prompt_ms = ns_to_ms(body, "prompt_eval_duration");
    r.timings.predicted_n = body.value("eval_count", 0);
    r.timings.predicted_ms = ns_to_ms(body, "eval_duration");
    r.timings.requests = 1;
    if (body.contains("logprobs")) r.probs = read_token_logprobs(body["logprobs"]);  // Ollama gives no ids: each is -1
    return r;
  } catch (const std::exception& e) {
    return core::fail(core::ErrorKind::parse, std::string("unexpected Ollama ") + (chat ? "/api/chat" : "/api/generate") +
                                                  " answer: " + e.what());
  }
}

namespace {
/// The load options every request to `model` carries (a different value reloads the model).
nlohmann::json load_options(const OllamaModelOptions& model) {
  nlohmann::json o = {{"num_ctx", model.num_ctx}};
  if (model.use_mmap) o["use_mmap"] = *model.use_mmap;
  return o;
}
}  // namespace

nlohmann::json ollama_embed_body(const std::vector<std::string>& inputs, const OllamaModelOptions& model) {
  // truncate:false: an over-long input is an error, not an embedding of a silently cut text.
  return {{"model", model.model},
          {"input", inputs},
          {"truncate", false},
          {"keep_alive", model.keep_alive},
          {"options", load_options(model)}};
}

core::Expected<std::vector<std::vector<float>>> parse_ollama_embed(const nlohmann::json& body, std::size_t n_inputs) {
  try {
    auto out = body.at("embeddings").get<std::vector<std::vector<float>>>();
    if (out.size() != n_inputs) {
      return core::fail(core::ErrorKind::parse, "/api/embed: " + std::to_string(out.size()) + " embeddings for " +
                                                    std::to_string(n_inputs) + " inputs");
    }
    return out;
  } catch (const std::exception& e) {
    return core::fail(core::ErrorKind::parse, std::string("/api/embed: ") + e.what());
  }
}

core::Expected<CompletionResponse> OllamaApi::complete(const CompletionRequest& request) {
  auto req = ollama_completion_request(request, m_model);
  if (!req) return std::unexpected(req.error());
  auto body = m_client->post_for_json(req->path, req->body);
  if (!body) return std::unexpected(body.error());
  return parse_ollama_completion(*body, req->path == "/api/chat");
}

core::Expected<std::vector<std::int32_t>> OllamaApi::tokenize(const std::string&, bool) {
  return core::fail(core::ErrorKind::unsupported, "tokenize is not supported by this backend (Ollama has no endpoint for it)");
}

core::Expected<std::string> OllamaApi::detokenize(const std::vector<std::int32_t>&) {
  return core::fail(core::ErrorKind::unsupported,
                    "detokenize is not supported by this backend (Ollama has no endpoint for it)");
}

core::Expected<std::vector<std::vector<float>>> OllamaApi::embed(const std::vector<std::string>& inputs) {
  auto body = m_client->post_for_json("/api/embed", ollama_embed_body(inputs, m_model));
  if (!body) return std::unexpected(body.error());
  return parse_ollama_embed(*body, inputs.size());
}

std::filesystem::path ollama_import_store() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const std::filesystem::path cache =
      xdg && *xdg ? std::filesystem::path(xdg) : std::filesystem::path(home && *home ? home : "/tmp") / ".cache";
  return cache / "kvsweep" / "ollama-models";
}

std::filesystem::path ollama_store_for(const CellSpec& spec) {
  for (const auto& [name, value] : spec.env)
    if (name == "OLLAMA_MODELS") return value;
  return ollama_import_store();
}

std::optional<core::Expected<OllamaImport>> ollama_import_for(const std::string& model_path) {
  std::error_code ec;
  const std::filesystem::path file(model_path);
  std::string ext = file.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext != ".gguf" || !std::filesystem::is_regular_file(file, ec)) return std::nullopt;
  const auto size = std::filesystem::file_size(file, ec);
  const auto mtime = std::filesystem::last_write_time(file, ec).time_since_epoch().count();
  // One hash per file per process: every cell of a run names the same GGUF.
  static std::mutex mutex;
  static std::map<std::string, std::tuple<std::uintmax_t, long long, std::string>> hashes;
  std::lock_guard lock(mutex);
  const std::string key = std::filesystem::absolute(file, ec).string();
  auto it = hashes.find(key);
  if (it == hashes.end() || std::get<0>(it->second) != size || std::get<1>(it->second) != mtime) {
    auto hex = core::sha256_file(file);
    if (!hex) return core::Expected<OllamaImport>(std::unexpected(hex.error()));
    it = hashes.insert_or_assign(key, std::tuple{size, static_cast<long long>(mtime), *hex}).first;
  }
  const std::string& hex = std::get<2>(it->second);
  // Ollama's name rule: letters, digits, '_', '-', '.'; the tag part at most 128 characters.
  std::string stem = file.stem().string();
  for (char& c : stem)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') c = '-';
  if (stem.empty() || !std::isalnum(static_cast<unsigned char>(stem.front()))) stem = "m" + stem;
  if (stem.size() > 64) stem.resize(64);
  return core::Expected<OllamaImport>(OllamaImport{"kvsweep/" + stem + ":" + hex.substr(0, 12), hex, file});
}

namespace {

/// Whether the store's layer blob for `sha256` (content-addressed: blobs/sha256-<hex>) holds the
/// GGUF's bytes. A blob of other content (replaced, corrupted) is removed so the import writes it again:
/// Ollama's POST /api/blobs keeps a blob that exists without reading it. Hashed once per blob (size
/// and mtime unchanged) per process, like the GGUF itself.
core::Expected<bool> layer_intact(const std::filesystem::path& store, const std::string& sha256) {
  const std::filesystem::path blob = store / "blobs" / ("sha256-" + sha256);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(blob, ec)) return false;
  const auto size = std::filesystem::file_size(blob, ec);
  const auto mtime = std::filesystem::last_write_time(blob, ec).time_since_epoch().count();
  static std::mutex mutex;
  static std::map<std::string, std::pair<std::uintmax_t, long long>> verified;
  std::lock_guard lock(mutex);
  const auto it = verified.find(blob.string());
  if (it != verified.end() && it->second == std::pair<std::uintmax_t, long long>{size, mtime}) return true;
  auto hex = core::sha256_file(blob);
  if (!hex) return std::unexpected(hex.error());
  if (*hex == sha256) {
    verified[blob.string()] = {size, static_cast<long long>(mtime)};
    return true;
  }
  verified.erase(blob.string());
  if (!std::filesystem::remove(blob, ec) && ec)
    return core::fail(core::ErrorKind::io, blob.string() + " holds other content than " + sha256 + " (sha256 " + *hex +
                                               ") and cannot be removed: " + ec.message());
  return false;
}

}  // namespace

core::Expected<bool> ollama_ensure_import(http::Client& client, const OllamaImport& import,
                                          const std::filesystem::path& store) {
  auto show = client.post_for_json("/api/show", {{"model", import.tag}});
  if (show) {
    // The tag names the GGUF's content, but the store answers by name: its layer must be those bytes.
    auto intact = layer_intact(store, import.sha256);
    if (!intact) return std::unexpected(intact.error());
    if (*intact) return false;
  } else if (show.error().kind != core::ErrorKind::http_status) {
    return std::unexpected(show.error());  // nothing answered: no import can help
  }
  // Not there (404), or its manifest unreadable (a torn file answers 500): imported again, which
  // writes the tag's manifest anew, instead of every later run of this GGUF failing to load.
  std::optional<std::string> bytes = core::read_file(import.file, core::Links::follow);
  if (!bytes) return core::fail(core::ErrorKind::io, "cannot read " + import.file.string() + " to import it into Ollama");
  const std::string digest = "sha256:" + import.sha256;
  auto blob = client.post_text("/api/blobs/" + digest, std::move(*bytes));
  if (!blob) return std::unexpected(blob.error());
  if (blob->status / 100 != 2)
    return core::fail(core::ErrorKind::http_status, "POST /api/blobs/" + digest + " answered " +
                                                        std::to_string(blob->status) + ": " + blob->body.substr(0, 300));
  auto created = client.post_for_json(
      "/api/create", {{"model", import.tag}, {"files", {{import.file.filename().string(), digest}}}, {"stream", false}});
  if (!created) return std::unexpected(created.error());
  if (created->value("status", "") != "success")
    return core::fail(core::ErrorKind::parse, "/api/create " + import.tag + " answered " + created->dump());
  return true;
}

bool ollama_before_llama_server(const std::string& version) {
  int major = 0, minor = 0;
  if (std::sscanf(version.c_str(), "%d.%d", &major, &minor) != 2) return false;
  if (major == 0 && minor == 0) return false;  // 0.0.0: a build without its version stamped
  return major == 0 && minor < 30;
}

std::vector<std::string> ollama_accepted_kv_types(const std::string& version) {
  if (ollama_before_llama_server(version)) return {"f16", "q8_0", "q4_0"};
  return {};
}

OllamaEnv ollama_launch_env(const CellSpec& spec, int port, const std::vector<std::string>& inherited) {
  OllamaEnv env;
  env.set = {
      {"OLLAMA_HOST", "127.0.0.1:" + std::to_string(port)},
      {"OLLAMA_KV_CACHE_TYPE", spec.type_k},
      {"OLLAMA_FLASH_ATTENTION", "1"},
      {"OLLAMA_NUM_PARALLEL", "1"},
      {"OLLAMA_CONTEXT_LENGTH", std::to_string(spec.n_ctx)},
  };
  auto owned = [](const std::string& name) {
    for (const char* o : kOwnedEnv)
      if (name == o) return true;
    return false;
  };
  for (const auto& [k, v] : spec.env)
    if (!owned(k)) env.set.emplace_back(k, v);
  auto user_set = [&](std::string_view name) {
    return std::any_of(spec.env.begin(), spec.env.end(), [&](const auto& kv) { return kv.first == name; });
  };
  if (!user_set("OLLAMA_NO_CLOUD")) env.set.emplace_back("OLLAMA_NO_CLOUD", "1");
  if (!user_set("OLLAMA_MODELS") && ollama_import_for(spec.model_path))
    env.set.emplace_back("OLLAMA_MODELS", ollama_store_for(spec).string());
  for (const auto& name : inherited) {
    if (!ollama_drops_inherited(name)) continue;
    bool kept = false;
    for (const auto& [k, v] : env.set) kept = kept || k == name;
    if (!kept) env.unset.push_back(name);
  }
  return env;
}

EffectiveKv ollama_effective_kv(const std::string& log, const CellSpec& spec) {
  EffectiveKv e = parse_effective_kv(log);
  if (e.found) return e;
  // Before 0.30 Ollama fell back to f16 with one of these warnings instead of failing.
  for (const char* fallback : {"unsupported OLLAMA_KV_CACHE_TYPE", "OLLAMA_FLASH_ATTENTION must be enabled",
                               "quantized kv cache requested but flash attention disabled"}) {
    if (log.find(fallback) != std::string::npos) {
      e.found = true;
      e.type_k = e.type_v = "f16";
      return e;
    }
  }
  e.declared = true;
  e.type_k = spec.type_k;
  e.type_v = spec.type_v;
  return e;
}

std::string OllamaFlavour::launch_line(const process::LaunchSpec& launch) const {
  // Names only for the user's variables: their values may be secrets.
  std::string line = m_binary + " serve with";
  for (std::size_t i = 0; i < launch.env.size(); ++i)
    line += " " + launch.env[i].first + (i < std::size(kOwnedEnv) ? "=" + launch.env[i].second : std::string{});
  if (!launch.unset_env.empty()) {
    line += "; removed from the environment:";
    for (const auto& u : launch.unset_env) line += " " + u;
  }
  return line;
}

process::LaunchSpec OllamaFlavour::launch_spec(const CellSpec& spec, int port) const {
  OllamaEnv env = ollama_launch_env(spec, port, environment_names());
  process::LaunchSpec launch;
  launch.argv = {m_binary, "serve"};
  launch.env = env.set;
  launch.unset_env = env.unset;
  return launch;
}

void OllamaFlavour::describe_launch(const process::LaunchSpec& launch, nlohmann::json& info) const {
  info["argv"] = launch.argv;
  nlohmann::json owned = nlohmann::json::object();
  for (std::size_t i = 0; i < std::size(kOwnedEnv) && i < launch.env.size(); ++i)
    owned[launch.env[i].first] = launch.env[i].second;
  info["env"] = owned;
}

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
                                                                  {"options", load_options(model)}})
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

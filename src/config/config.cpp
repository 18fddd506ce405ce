#include "kvsweep/config/config.hpp"

#include <algorithm>
#include <cstdlib>

#include "kvsweep/config/command_server.hpp"
#include "kvsweep/config/file_names.hpp"
#include "kvsweep/config/keys.hpp"
#include "kvsweep/config/variants.hpp"
#include "kvsweep/core/cache_types.hpp"
#include "kvsweep/core/error.hpp"
#include "kvsweep/core/redact.hpp"
#include "kvsweep/http/credentials.hpp"

namespace kvsweep::config {

const std::vector<std::string>& cache_types() {
  static const std::vector<std::string> types = [] {
    std::vector<std::string> names;
    for (const auto& t : core::kCacheTypes) names.emplace_back(t.name);
    return names;
  }();
  return types;
}

const std::vector<std::string>& cache_types(const ServerConfig& server) {
  return server.api == "openai" ? server.command.types : cache_types();
}

namespace {

void check_cache_type_in(const std::string& t, const std::vector<std::string>& types, const std::string& whose,
                         const Site& site) {
  if (std::find(types.begin(), types.end(), t) != types.end()) return;
  std::string valid;
  for (const auto& x : types) valid += (valid.empty() ? "" : ", ") + x;
  site.fail("unknown cache type '" + t + "'" + did_you_mean(t, types) + "; valid types" + whose + ": " + valid);
}

}  // namespace

void check_cache_type(const std::string& t, const Site& site) { check_cache_type_in(t, cache_types(), "", site); }

namespace {

constexpr long long kMaxContext = (1LL << 31) - 256;  // rounded up to 256, it still fits -c's int
constexpr double kWeekSeconds = 7 * 24 * 3600.0;

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

/// The cache types of `server`'s cells: llama-server's (-ctk/-ctv), or a launch template's own names.
struct TypeCheck {
  const std::vector<std::string>& types;
  std::string whose;  // " for vLLM (preset vllm)", or "" for llama-server's
  void operator()(const std::string& t, const Site& site) const { check_cache_type_in(t, types, whose, site); }
};

TypeCheck type_check(const ServerConfig& server) {
  if (server.api != "openai") return {cache_types(), ""};
  const auto& c = server.command;
  return {c.types, " for " + c.server + (c.preset.empty() ? std::string(" (server.cache_types)") : " (preset " + c.preset + ")")};
}

std::vector<std::string> type_list(const nlohmann::json& grid, const std::string& key, const TypeCheck& check,
                                   const Site& site) {
  if (!grid.contains(key)) site.child(key).fail("missing (a list of cache types, or \"all\")");
  const auto& v = grid[key];
  if (v.is_string() && v.get<std::string>() == "all") return check.types;
  auto list = get_strings(grid, key, {}, site);
  if (list.empty()) site.child(key).fail("empty list");
  for (std::size_t i = 0; i < list.size(); ++i) check(list[i], site.child(key).index(i));
  return list;
}

/// sweep.adaptive: an object; present means on unless "enabled": false.
AdaptiveConfig parse_adaptive(const nlohmann::json& j, const Site& site) {
  check_keys(j, {"enabled", "min_items", "alpha", "futility", "seed"}, site);
  AdaptiveConfig a;
  a.enabled = get_bool(j, "enabled", true, site);
  a.min_items = static_cast<int>(get_int_in(j, "min_items", a.min_items, 2, 1'000'000, site));
  a.alpha = get_number(j, "alpha", a.alpha, site);
  if (!(a.alpha > 0.0 && a.alpha <= 0.5)) site.child("alpha").fail("must be in (0, 0.5], got " + std::to_string(a.alpha));
  a.futility = get_number_in(j, "futility", a.futility, 0.0, 1.0, site);
  const long long seed = get_int(j, "seed", 1, site);
  if (seed < 0) site.child("seed").fail("must be >= 0");
  a.seed = static_cast<std::uint64_t>(seed);
  return a;
}

/// A "K/V" cell name of the grid, parsed here once: every later reader holds the pair.
core::KvPair parse_cell_name(const std::string& cell, const TypeCheck& check, const Site& site) {
  const auto pair = core::KvPair::parse(cell);
  if (!pair) site.fail("expected \"K/V\" (e.g. \"f16/f16\"), got \"" + cell + "\"");
  check(pair->type_k, site);
  check(pair->type_v, site);
  return *pair;
}

std::vector<core::KvPair> parse_cell_names(const nlohmann::json& gj, const char* key, const TypeCheck& check,
                                           const Site& g) {
  const std::vector<std::string> names = get_strings(gj, key, {}, g);
  std::vector<core::KvPair> pairs;
  for (std::size_t i = 0; i < names.size(); ++i)
    pairs.push_back(parse_cell_name(names[i], check, g.child(key).index(i)));
  return pairs;
}

// Ollama (and a launch template with kv_tied: vLLM, SGLang, TabbyAPI) has one KV setting for both
// caches, so every cell the grid makes (the same cells as sweep::grid_cells) must have K == V.
void check_symmetric(const GridConfig& grid, const std::string& setting, const Site& g) {
  auto why = [&](const core::KvPair& p) {
    return "cell " + p.text() + " has K != V, but " + setting + "; every cell needs K == V";
  };
  for (const auto& k : grid.k)
    for (const auto& v : grid.v)
      if (k != v && !grid.tied && !grid.excludes({k, v})) g.child("v").fail(why({k, v}) + ": use \"v\": \"tied\"");
  for (std::size_t i = 0; i < grid.include.size(); ++i)
    if (grid.include[i].type_k != grid.include[i].type_v) g.child("include").index(i).fail(why(grid.include[i]));
  if (grid.reference.type_k != grid.reference.type_v) g.child("reference").fail(why(grid.reference));
}

/// A server URL with its userinfo split off, checked whole before anything starts: scheme
/// http(s), a host, a numeric port.
http::SplitUrl checked_url(const std::string& text, const Site& site) {
  if (text.empty()) return {};
  http::SplitUrl url = http::split_userinfo(text);
  if (const std::string problem = http::url_problem(url.url); !problem.empty())
    site.fail(problem + ", got \"" + core::redact(text) + "\" (expected e.g. \"http://127.0.0.1:8080\")");
  return url;
}

/// What of `c` must never be written (core/redact.hpp): secret flag values in every args list and
/// in a launch template's command, secret-named environment values, URL passwords, and the keys the
/// api_key_env names hold.
void register_secrets(const Config& c) {
  core::add_secrets_from_args(c.server.args);
  core::add_secrets_from_args(c.server.command.argv);
  core::add_secrets_from_env(c.server.env);
  for (const auto& v : c.variants) {
    core::add_secrets_from_args(v.args);
    core::add_secrets_from_env(v.env);
  }
  core::add_secret(c.server.url_password);
  std::vector<std::string> key_envs = {c.server.api_key_env};
  if (c.embedder) {
    core::add_secrets_from_args(c.embedder->args);
    core::add_secret(c.embedder->url_password);
    key_envs.push_back(c.embedder->api_key_env);
  }
  for (const auto& name : key_envs)
    if (const char* key = name.empty() ? nullptr : std::getenv(name.c_str())) core::add_secret(key);
}

/// Phase server: the backend and how to launch or reach it, checked against each other.
ServerConfig read_server(const nlohmann::json& sj, const Site& s) {
  ServerConfig server;
  std::vector<std::string> keys = {"backend", "binary", "args", "env", "ctx", "ready_timeout_s", "request_timeout_s",
                                   "stop_grace_s", "url", "api_key_env", "api", "log"};
  keys.insert(keys.end(), command_server_keys().begin(), command_server_keys().end());
  check_keys(sj, keys, s);
  // A preset or a command line is a launch template: backend "command" unless the section says otherwise.
  const bool templated = sj.is_object() && (sj.contains("preset") || sj.contains("command"));
  server.backend = get_string(sj, "backend", templated ? "command" : server.backend, s);
  static const std::vector<std::string> backends = {"llama-server", "ollama", "external", "command"};
  if (std::find(backends.begin(), backends.end(), server.backend) == backends.end()) {
    std::string msg = "unknown backend '" + server.backend + "'";
    msg += did_you_mean(server.backend, backends);
    s.child("backend").fail(msg + "; valid: " + join(backends));
  }
  // A running OpenAI-compatible server (vLLM, SGLang…) is attached with its template's serving keys.
  const bool attached_openai = server.backend == "external" && sj.is_object() && sj.contains("api") &&
                               sj["api"].is_string() && sj["api"].get<std::string>() == "openai";
  if (server.backend != "command" && !attached_openai)
    for (const auto& key : command_server_keys())
      if (sj.contains(key))
        s.child(key).fail("only for a launch template (backend \"command\") or an attached OpenAI-compatible server "
                          "(backend \"external\", api \"openai\"); backend is \"" + server.backend + "\"");
  server.binary = get_string(sj, "binary", server.backend == "ollama" ? "ollama" : server.backend == "command" ? "" : server.binary, s);
  if (server.backend == "command") {
    server.command = read_command_server(sj, s, server.binary);
    if (server.binary.empty() && std::ranges::any_of(server.command.argv, [](const std::string& a) {
          return a.find("{binary}") != std::string::npos;
        }))
      s.child("binary").fail("missing: the command uses {binary}");
    server.api = "openai";
  }
  server.args = get_strings(sj, "args", {}, s);
  server.env = get_env(sj, "env", s);
  // Ranges are those the values are used in: -c takes an int (rounded up to 256), timeouts
  // become milliseconds; a week bounds any wait kvsweep should make.
  server.ctx = static_cast<int>(get_int_in(sj, "ctx", 0, 0, kMaxContext, s));
  server.ready_timeout_s = get_number_in(sj, "ready_timeout_s", server.ready_timeout_s, 0, kWeekSeconds, s, Bound::open);
  server.request_timeout_s =
      get_number_in(sj, "request_timeout_s", server.request_timeout_s, 0, kWeekSeconds, s, Bound::open);
  server.stop_grace_s = get_number_in(sj, "stop_grace_s", server.stop_grace_s, 0, kWeekSeconds, s);
  auto url = checked_url(get_string(sj, "url", "", s), s.child("url"));
  server.url = url.url;
  server.url_user = url.user;
  server.url_password = url.password;
  server.api_key_env = get_string(sj, "api_key_env", "", s);
  if (server.backend == "external" && server.url.empty())
    s.child("url").fail("required for backend \"external\" (e.g. \"http://127.0.0.1:8080\")");
  // api: what an external server speaks; backend ollama implies it, a launch template speaks OpenAI's.
  server.api = get_string(sj, "api", server.backend == "ollama" ? "ollama" : server.backend == "command" ? "openai" : "llama-server", s);
  if (server.backend == "command" && server.api != "openai")
    s.child("api").fail("a launch template (backend \"command\") speaks the OpenAI API: \"openai\"");
  if (server.backend == "external" && server.api != "llama-server" && server.api != "ollama" && server.api != "openai")
    s.child("api").fail("expected \"llama-server\", \"ollama\" or \"openai\", got \"" + server.api + "\"");
  if (server.backend != "command" && server.backend != "external" && server.api != "llama-server" && server.api != "ollama")
    s.child("api").fail("expected \"llama-server\" or \"ollama\", got \"" + server.api + "\"");
  if (attached_openai) {
    std::string no_binary;
    server.command = read_command_server(sj, s, no_binary, /*attached=*/true);
  }
  if (server.backend == "llama-server" && server.api != "llama-server")
    s.child("api").fail("backend \"llama-server\" speaks the llama-server API; for Ollama use backend \"ollama\" "
                        "(launch) or \"external\" with \"api\": \"ollama\" (attach)");
  if (server.backend == "ollama" && server.api != "ollama")
    s.child("api").fail("backend \"ollama\" speaks the Ollama API");
  if (server.backend == "ollama") {
    if (!server.url.empty())
      s.child("url").fail("backend \"ollama\" launches its own server; to attach to a running Ollama use "
                          "\"backend\": \"external\" with \"api\": \"ollama\"");
    if (!server.args.empty())
      s.child("args").fail("`ollama serve` takes no arguments: kvsweep sets OLLAMA_* per cell; put other settings "
                           "in server.env");
    check_ollama_env(server.env, s.child("env"));
  }
  server.log = get_string(sj, "log", "", s);
  if (!server.log.empty() && (server.backend != "external" || server.api != "llama-server"))
    s.child("log").fail("only for an attached llama-server (backend \"external\", api \"llama-server\"): the file "
                        "that server logs to, read for the K/V types it allocated");
  check_server_args(server.args, s.child("args"));
  if (server.backend == "llama-server") check_llama_arg_forms(server.args, s.child("args"));
  return server;
}

/// Phase models: at least one, names unique; a llama-server model's path resolved against the config's folder.
std::vector<ModelConfig> read_models(const nlohmann::json& doc, const std::string& backend,
                                     const std::filesystem::path& base_dir, const Site& root) {
  std::vector<ModelConfig> models;
  if (!doc.contains("models") || !doc["models"].is_array() || doc["models"].empty())
    root.child("models").fail("missing or empty: give at least one {\"name\":…, \"path\":…}");
  for (std::size_t i = 0; i < doc["models"].size(); ++i) {
    Site m = root.child("models").index(i);
    const auto& mj = doc["models"][i];
    check_keys(mj, {"name", "path"}, m);
    ModelConfig model;
    model.path = get_string(mj, "path", "", m);
    if (model.path.empty()) m.child("path").fail("missing");
    // Ollama: a tag ("qwen3:8b"), or a GGUF file (".gguf"), which kvsweep imports into its own store. A launch
    // template's {model} may be a hub id ("Qwen/Qwen3-8B") or a tag: only a path written as one ("./…",
    // "../…") or a file beside the config resolves against the config's folder.
    std::filesystem::path p(model.path);
    const bool path_like = model.path.rfind("./", 0) == 0 || model.path.rfind("../", 0) == 0;
    std::error_code ec;
    const bool command_path = backend == "command" && (path_like || std::filesystem::exists(base_dir / p, ec));
    if (backend == "llama-server" || (backend == "ollama" && is_gguf_path(model.path)) || command_path) {
      if (p.is_relative()) p = base_dir / p;
      model.path = p.lexically_normal().string();
    }
    model.name = get_string(mj, "name", std::filesystem::path(model.path).stem().string(), m);
    for (const auto& other : models)
      if (other.name == model.name) m.child("name").fail("duplicate model name '" + model.name + "'");
    models.push_back(model);
  }
  return models;
}

/// Phase grid: the K and V types, the cells included and excluded, the reference and the order.
GridConfig read_grid(const nlohmann::json& doc, const ServerConfig& server, const Site& root) {
  GridConfig grid;
  Site g = root.child("grid");
  if (!doc.contains("grid")) g.fail("missing (e.g. {\"k\": [\"f16\",\"q8_0\"], \"v\": \"same-as-k\"})");
  const auto& gj = doc["grid"];
  check_keys(gj, {"k", "v", "include", "exclude", "reference", "order", "seed"}, g);
  const TypeCheck check = type_check(server);
  grid.k = type_list(gj, "k", check, g);
  if (gj.contains("v") && gj["v"].is_string() && gj["v"] == "same-as-k") {
    grid.v = grid.k;
  } else if (gj.contains("v") && gj["v"].is_string() && gj["v"] == "tied") {
    grid.v = grid.k;
    grid.tied = true;
  } else {
    grid.v = type_list(gj, "v", check, g);
  }
  grid.include = parse_cell_names(gj, "include", check, g);
  grid.exclude = parse_cell_names(gj, "exclude", check, g);
  // A launch template's default reference is its own (vLLM: auto/auto); its types differ from llama.cpp's.
  const std::string reference =
      server.api == "openai" && !server.command.reference.empty() ? server.command.reference : "f16/f16";
  grid.reference = parse_cell_name(get_string(gj, "reference", reference, g), check, g.child("reference"));
  std::string order = get_string(gj, "order", "shuffle", g);
  if (order == "shuffle") grid.order = Order::shuffle;
  else if (order == "as-listed") grid.order = Order::as_listed;
  else g.child("order").fail("expected \"shuffle\" or \"as-listed\", got \"" + order + "\"");
  grid.seed = static_cast<std::uint64_t>(get_int(gj, "seed", 7, g));
  if (uses_ollama(server))
    check_symmetric(grid, "Ollama runs K and V at one precision (OLLAMA_KV_CACHE_TYPE is one setting for both caches)", g);
  if (server.api == "openai" && server.command.tied)
    check_symmetric(grid, server.command.server + " runs K and V at one precision (one cache-type setting for both "
                          "caches; server.kv_tied)", g);
  return grid;
}

/// Phase embedder: the backend and model of the embedding server (telephone's similarity).
EmbedderConfig read_embedder(const nlohmann::json& ej, const std::filesystem::path& base_dir, const Site& e) {
  check_keys(ej, {"backend", "model", "pooling", "args", "url", "api_key_env"}, e);
  EmbedderConfig emb;
  emb.backend = get_string(ej, "backend", emb.backend, e);
  if (emb.backend != "llama-server" && emb.backend != "external" && emb.backend != "ollama")
    e.child("backend").fail("expected \"llama-server\", \"external\" or \"ollama\", got \"" + emb.backend + "\"");
  emb.model = get_string(ej, "model", "", e);
  emb.pooling = get_string(ej, "pooling", "mean", e);
  if (emb.pooling != "mean" && emb.pooling != "last" && emb.pooling != "cls")
    e.child("pooling").fail("expected mean, last or cls, got \"" + emb.pooling + "\"");
  emb.args = get_strings(ej, "args", {}, e);
  if (emb.backend == "llama-server") check_llama_arg_forms(emb.args, e.child("args"));
  auto url = checked_url(get_string(ej, "url", "", e), e.child("url"));
  emb.url = url.url;
  emb.url_user = url.user;
  emb.url_password = url.password;
  emb.api_key_env = get_string(ej, "api_key_env", "", e);
  if (emb.backend == "llama-server" || (emb.backend == "ollama" && emb.url.empty() && is_gguf_path(emb.model))) {
    if (emb.model.empty()) e.child("model").fail("missing (path to an embedding GGUF)");
    std::filesystem::path p(emb.model);
    if (p.is_relative()) p = base_dir / p;
    emb.model = p.lexically_normal().string();
  } else if (emb.backend == "ollama") {
    // A tag (or, launched, a GGUF file imported as for models[].path); `ollama serve` at f16 KV
    // unless url names a running Ollama.
    if (emb.model.empty()) e.child("model").fail("missing (an Ollama tag, e.g. \"qwen3-embedding:0.6b\")");
  } else if (emb.url.empty()) {
    e.child("url").fail("required for an external embedder");
  }
  return emb;
}

/// Phase sweep: cells at once (llama-server only), their slot environments, the adaptive stop.
SweepConfig read_sweep(const nlohmann::json& swj, const ServerConfig& server, const Site& sw) {
  SweepConfig sweep;
  check_keys(swj, {"parallel_cells", "slot_env", "adaptive"}, sw);
  sweep.parallel_cells = static_cast<int>(get_int(swj, "parallel_cells", 1, sw));
  if (sweep.parallel_cells < 1) sw.child("parallel_cells").fail("must be >= 1");
  if (swj.contains("slot_env")) {
    if (!swj["slot_env"].is_object())
      sw.child("slot_env").fail("expected an object of NAME: template, e.g. {\"CUDA_VISIBLE_DEVICES\": \"{slot}\"}");
    for (auto it = swj["slot_env"].begin(); it != swj["slot_env"].end(); ++it) {
      if (!it.value().is_string()) sw.child("slot_env").child(it.key()).fail("expected a string");
      auto e = make_slot_env(it.key(), it.value().get<std::string>());
      if (!e) sw.child("slot_env").child(it.key()).fail(e.error().message);
      sweep.slot_env.push_back(*e);
    }
  }
  if (swj.contains("adaptive")) sweep.adaptive = parse_adaptive(swj["adaptive"], sw.child("adaptive"));
  if (sweep.parallel_cells > 1 && server.backend != "llama-server")
    sw.child("parallel_cells").fail("needs backend \"llama-server\" (an Ollama or external server is one server, "
                                    "not one per cell)");
  return sweep;
}

}  // namespace

bool is_gguf_path(std::string_view path) {
  constexpr std::string_view ext = ".gguf";
  if (path.size() < ext.size()) return false;
  const auto tail = path.substr(path.size() - ext.size());
  return std::equal(tail.begin(), tail.end(), ext.begin(),
                    [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
}

bool uses_ollama(const ServerConfig& server) {
  return server.backend == "ollama" || (server.backend == "external" && server.api == "ollama");
}

Config from_json(const nlohmann::json& doc, const std::filesystem::path& file) {
  Config c;
  c.file = file;
  c.base_dir = file.has_parent_path() ? std::filesystem::absolute(file).parent_path() : std::filesystem::current_path();
  c.raw = doc;
  Site root(file.string(), "");
  check_keys(doc, {"name", "server", "models", "grid", "probes", "embedder", "sweep", "output_dir", "$schema", "description",
                   "variants"},
             root);
  c.name = get_string(doc, "name", file.stem().string(), root);
  check_run_name(c.name, root.child("name"));
  c.output_dir = get_string(doc, "output_dir", "runs", root);
  if (doc.contains("server")) c.server = read_server(doc["server"], root.child("server"));
  if (!c.server.log.empty() && std::filesystem::path(c.server.log).is_relative())
    c.server.log = (c.base_dir / c.server.log).lexically_normal().string();
  c.variants = read_variants(doc, c.server, c.base_dir, root.child("variants"));
  c.models = read_models(doc, c.server.backend, c.base_dir, root);
  c.grid = read_grid(doc, c.server, root);
  check_file_names(c, root);
  // probes: each factory validates its own keys
  if (!doc.contains("probes") || !doc["probes"].is_array() || doc["probes"].empty())
    root.child("probes").fail("missing or empty: give at least one probe, e.g. {\"kind\": \"complete\"}");
  c.probes = doc["probes"];
  if (doc.contains("embedder")) c.embedder = read_embedder(doc["embedder"], c.base_dir, root.child("embedder"));
  if (doc.contains("sweep")) c.sweep = read_sweep(doc["sweep"], c.server, root.child("sweep"));
  register_secrets(c);
  return c;
}

}  // namespace kvsweep::config

#include "kvsweep/config/config.hpp"

// A config written back as the manifest records it, and its hash: what a resume and a merge compare.

#include "kvsweep/config/command_server.hpp"
#include "kvsweep/config/variants.hpp"
#include "kvsweep/core/fnv1a.hpp"

namespace kvsweep::config {

namespace {

std::vector<std::string> cell_names(const std::vector<core::KvPair>& pairs) {
  std::vector<std::string> names;
  for (const auto& p : pairs) names.push_back(p.text());
  return names;
}

}  // namespace

nlohmann::json to_json(const Config& c) {
  nlohmann::json server = {{"backend", c.server.backend}, {"binary", c.server.binary}, {"args", c.server.args},
                           {"ctx", c.server.ctx},         {"ready_timeout_s", c.server.ready_timeout_s},
                           {"request_timeout_s", c.server.request_timeout_s}, {"stop_grace_s", c.server.stop_grace_s},
                           {"url", c.server.url},          {"api_key_env", c.server.api_key_env}};
  // Only when not the default, so configs written before "api" existed keep their hash.
  if (c.server.api != "llama-server") server["api"] = c.server.api;
  if (c.server.api == "openai") server["command"] = to_json(c.server.command);
  nlohmann::json env = nlohmann::json::object();
  for (const auto& [k, v] : c.server.env) env[k] = v;
  server["env"] = env;
  nlohmann::json models = nlohmann::json::array();
  for (const auto& m : c.models) models.push_back({{"name", m.name}, {"path", m.path}});
  nlohmann::json grid = {{"k", c.grid.k}, {"v", c.grid.v}, {"tied", c.grid.tied}, {"include", cell_names(c.grid.include)},
                         {"exclude", cell_names(c.grid.exclude)}, {"reference", c.grid.reference.text()},
                         {"order", c.grid.order == Order::shuffle ? "shuffle" : "as-listed"}, {"seed", c.grid.seed}};
  nlohmann::json j = {{"name", c.name}, {"server", server}, {"models", models}, {"grid", grid}, {"probes", c.probes},
                      {"output_dir", c.output_dir}};
  // Only when given: a config without variants keeps its hash and its manifest.
  if (!c.variants.empty()) {
    nlohmann::json variants = nlohmann::json::array();
    for (const auto& v : c.variants) variants.push_back(to_json(v));
    j["variants"] = variants;
  }
  // Only when set: the manifest of a serial run stays as it was.
  if (c.sweep.parallel_cells != 1 || !c.sweep.slot_env.empty()) {
    nlohmann::json slot_env = nlohmann::json::object();
    for (const auto& e : c.sweep.slot_env) slot_env[e.name] = e.value_template;
    j["sweep"] = {{"parallel_cells", c.sweep.parallel_cells}, {"slot_env", slot_env}};
  }
  if (c.sweep.adaptive.enabled) {
    const AdaptiveConfig& a = c.sweep.adaptive;
    j["sweep"]["adaptive"] = {{"min_items", a.min_items}, {"alpha", a.alpha}, {"futility", a.futility}, {"seed", a.seed}};
  }
  if (c.embedder) {
    j["embedder"] = {{"backend", c.embedder->backend}, {"model", c.embedder->model}, {"pooling", c.embedder->pooling},
                     {"args", c.embedder->args}, {"url", c.embedder->url}, {"api_key_env", c.embedder->api_key_env}};
  }
  return j;
}

std::string config_hash(const Config& c) {
  nlohmann::json j = to_json(c);
  j.erase("output_dir");
  j.erase("sweep");  // how many cells ran at once, and on which device, does not change what they answer
  // FNV-1a 64 over the canonical dump (keys sorted by nlohmann's std::map); enough to tell configs apart.
  // The seed is not FNV's offset basis (a digit short of 14695981039346656037) but has always been
  // this one; keeping it keeps the hashes of existing runs, which merge compares.
  return core::hex16(core::fnv1a64(j.dump(), 1469598103934665603ULL));
}

}  // namespace kvsweep::config

/// A published file's `setup` and a run's, in one field list, and their differences field by field.

#include "kvsweep/report/analysis/published_setup.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "kvsweep/report/analysis/published.hpp"
#include "kvsweep/report/format.hpp"

namespace kvsweep::report {

namespace {

using json = nlohmann::json;

/// "262K" → 262000, "4096" → 4096; 0 when it reads as no positive number.
double context_tokens(const json& v, const config::Site& site) {
  if (v.is_number() && v.get<double>() > 0) return v.get<double>();
  if (v.is_string()) {
    const std::string text = v.get<std::string>();
    char* end = nullptr;
    const double n = std::strtod(text.c_str(), &end);
    if (end != text.c_str() && n > 0) return (*end == 'K' || *end == 'k') ? n * 1000 : n;
  }
  site.fail("expected a positive number of tokens (4096, or \"262K\"), got " + config::shown(v));
}

PublishedProbeSetup parse_probe(const std::string& name, const json& p, const config::Site& site) {
  config::check_keys(p, {"kind", "items", "params"}, site);
  PublishedProbeSetup out;
  out.name = name;
  out.kind = config::get_required_string(p, "kind", site);
  if (p.contains("items")) out.items = static_cast<std::size_t>(config::get_int_in(p, "items", 0, 1, 1'000'000, site));
  if (p.contains("params")) {
    if (!p["params"].is_object()) site.child("params").fail("expected an object, got " + config::shown(p["params"]));
    out.params = p["params"];
  }
  return out;
}

/// A build's commit when the text names one ("commit de3ff81", or a 7–40 digit hex word), else the text.
std::string build_identity(const std::string& text) {
  std::string word, found;
  auto take = [&] {
    const bool hex = word.size() >= 7 && word.size() <= 40 &&
                     std::all_of(word.begin(), word.end(), [](unsigned char c) { return std::isxdigit(c) != 0; }) &&
                     std::any_of(word.begin(), word.end(), [](unsigned char c) { return std::isalpha(c) != 0; });
    if (hex && found.empty()) found = word;
    word.clear();
  };
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else take();
  }
  take();
  return found.empty() ? text : found;
}

bool same_build(const std::string& a, const std::string& b) {
  const std::string x = build_identity(a), y = build_identity(b);
  const std::size_t n = std::min(x.size(), y.size());
  return x == y || (n >= 7 && x.compare(0, n, y, 0, n) == 0 && x != a && y != b);
}

std::string text_of(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  std::string s = v.dump();
  return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}

/// obj[key] when it is a string, else "": a manifest is read leniently (a field of another type reads as absent).
std::string str(const json& obj, const char* key) {
  if (!obj.is_object()) return "";
  const auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string short_sha(const std::string& s) { return s.size() > 12 ? s.substr(0, 12) + "…" : s; }

void add(std::vector<SetupDifference>& out, const std::string& field, const std::string& published, const std::string& run,
         bool same) {
  if (published.empty()) {
    if (!run.empty()) out.push_back({SetupDifference::Kind::not_stated, field, "", run});
    return;
  }
  if (run.empty() || same) return;
  out.push_back({SetupDifference::Kind::differs, field, published, run});
}

}  // namespace

const PublishedProbeSetup* PublishedSetup::probe(std::string_view name_or_kind) const {
  for (const auto& p : probes)
    if (p.name == name_or_kind) return &p;
  for (const auto& p : probes)
    if (p.kind == name_or_kind) return &p;
  return nullptr;
}

const std::vector<SetupField>& setup_fields() {
  static const std::vector<SetupField> kFields = {
      {"model", &PublishedSetup::model},       {"model_sha256", &PublishedSetup::model_sha256},
      {"quantisation", &PublishedSetup::quantisation}, {"backend", &PublishedSetup::backend},
      {"build", &PublishedSetup::build},       {"host", &PublishedSetup::host},
      {"compute", &PublishedSetup::compute},   {"embedder", &PublishedSetup::embedder},
      {"embedder_sha256", &PublishedSetup::embedder_sha256}};
  return kFields;
}

PublishedSetup parse_setup(const json& setup, const config::Site& site) {
  std::vector<std::string> keys{"context", "lines", "probes", "details"};
  for (const auto& f : setup_fields()) keys.emplace_back(f.key);
  config::check_keys(setup, keys, site);
  PublishedSetup out;
  for (const auto& f : setup_fields()) out.*f.member = config::get_string(setup, f.key, "", site);
  for (const char* sha : {"model_sha256", "embedder_sha256"}) {
    const std::string v = config::get_string(setup, sha, "", site);
    if (!v.empty() && (v.size() != 64 || !std::all_of(v.begin(), v.end(), [](unsigned char c) { return std::isxdigit(c) != 0; })))
      site.child(sha).fail("expected a sha256 (64 hex digits), got \"" + v + "\"");
  }
  if (setup.contains("context")) out.context = context_tokens(setup["context"], site.child("context"));
  if (setup.contains("lines")) out.lines = static_cast<int>(config::get_int_in(setup, "lines", 0, 1, 100000, site));
  if (setup.contains("probes")) {
    const json& probes = setup["probes"];
    if (!probes.is_object()) site.child("probes").fail("expected an object: probe name → {kind, items, params}");
    for (auto it = probes.begin(); it != probes.end(); ++it) {
      const config::Site at = site.child("probes").child(it.key());
      if (!it.value().is_object()) at.fail("expected an object, got " + config::shown(it.value()));
      out.probes.push_back(parse_probe(it.key(), it.value(), at));
    }
  }
  if (setup.contains("details")) {
    if (!setup["details"].is_object()) site.child("details").fail("expected an object");
    out.details = setup["details"];
  }
  return out;
}

json setup_json(const PublishedSetup& setup) {
  json out = json::object();
  for (const auto& f : setup_fields())
    if (!(setup.*f.member).empty()) out[f.key] = setup.*f.member;
  if (setup.context > 0) out["context"] = setup.context;
  if (setup.lines > 0) out["lines"] = setup.lines;
  if (!setup.probes.empty()) {
    json probes = json::object();
    for (const auto& p : setup.probes) {
      json entry = {{"kind", p.kind}};
      if (p.items > 0) entry["items"] = p.items;
      if (!p.params.empty()) entry["params"] = p.params;
      probes[p.name] = std::move(entry);
    }
    out["probes"] = std::move(probes);
  }
  if (!setup.details.empty()) out["details"] = setup.details;
  return out;
}

PublishedSetup run_setup(const sweep::Manifest& m) {
  PublishedSetup out;
  if (m.models.is_array() && !m.models.empty()) {
    out.model = str(m.models[0], "name");
    out.model_sha256 = str(m.models[0], "sha256");
  }
  out.backend = str(m.server, "backend");
  out.build = str(m.server, "version");
  if (m.host.is_object()) {
    const json cores = m.host.value("cores", json());
    out.host = (cores.is_number_integer() ? std::to_string(cores.get<long long>()) + "-core " : std::string()) +
               str(m.host, "cpu");
  }
  const json compute = m.compute.is_null() ? sweep::host_compute(m.cell_list()) : m.compute;
  if (compute.is_object()) out.compute = sweep::describe_compute(compute);
  out.context = m.n_ctx.value_or(0);
  out.embedder = std::filesystem::path(str(m.embedder, "model")).filename().string();
  out.embedder_sha256 = str(m.embedder, "sha256");
  // The manifest's probes[i] is the config's probes[i], as the run built them.
  const json configs = m.config.is_object() ? m.config.value("probes", json::array()) : json::array();
  if (m.probes.is_array()) {
    for (std::size_t i = 0; i < m.probes.size(); ++i) {
      const json& p = m.probes[i];
      if (!p.is_object()) continue;
      PublishedProbeSetup ps{str(p, "name"), str(p, "kind"), 0, json::object()};
      if (p.contains("items") && p["items"].is_number_unsigned()) ps.items = p["items"].get<std::size_t>();
      if (configs.is_array() && i < configs.size() && configs[i].is_object()) {
        for (auto it = configs[i].begin(); it != configs[i].end(); ++it)
          if (it.key() != "kind" && it.key() != "name") ps.params[it.key()] = it.value();
      }
      out.probes.push_back(std::move(ps));
    }
  }
  return out;
}

json variant_settings(const sweep::Manifest& m, const std::string& variant) {
  const json variants = m.config.is_object() ? m.config.value("variants", json::array()) : json::array();
  if (!variants.is_array()) return nullptr;
  for (const auto& v : variants) {
    if (str(v, "name") != variant) continue;
    const auto env = v.find("env"), args = v.find("args");
    return json{{"env", env != v.end() && env->is_object() ? *env : json::object()},
                {"args", args != v.end() && args->is_array() ? *args : json::array()}};
  }
  return nullptr;
}

std::vector<SetupDifference> setup_differences(const PublishedSetup& p, const PublishedSetup& r) {
  std::vector<SetupDifference> out;
  // The model: by identity where both give it; the name is then only words.
  if (!p.model_sha256.empty() && !r.model_sha256.empty()) {
    if (p.model_sha256 != r.model_sha256)
      out.push_back({SetupDifference::Kind::differs, "model",
                     p.model + " (sha256 " + short_sha(p.model_sha256) + ")", r.model + " (sha256 " + short_sha(r.model_sha256) + ")"});
  } else {
    add(out, "model", p.model, r.model, p.model == r.model);
  }
  add(out, "quantisation", p.quantisation, r.quantisation, p.quantisation == r.quantisation);
  add(out, "backend", p.backend, r.backend, p.backend == r.backend);
  add(out, "build", p.build, r.build, same_build(p.build, r.build));
  if (!p.compute.empty() && !r.compute.empty()) {
    add(out, "host (llama.cpp's compute)", p.compute, r.compute, p.compute == r.compute);
  } else {
    // The host in words is for people: two descriptions of one class rarely read alike, so both are
    // listed for the reader to judge, not compared.
    if (!p.host.empty() && !r.host.empty()) out.push_back({SetupDifference::Kind::unchecked, "host", p.host, r.host});
    else add(out, "host", p.host, r.host, true);
  }
  add(out, "context", p.context > 0 ? shortest(p.context) : "", r.context > 0 ? shortest(r.context) : "",
      p.context == r.context);
  if (!p.embedder_sha256.empty() && !r.embedder_sha256.empty()) {
    if (p.embedder_sha256 != r.embedder_sha256)
      out.push_back({SetupDifference::Kind::differs, "embedder", p.embedder + " (sha256 " + short_sha(p.embedder_sha256) + ")",
                     r.embedder + " (sha256 " + short_sha(r.embedder_sha256) + ")"});
  } else if (!r.embedder.empty()) {
    add(out, "embedder", p.embedder, r.embedder, p.embedder == r.embedder);
  }
  for (const auto& pp : p.probes) {
    const PublishedProbeSetup* rp = r.probe(pp.name);
    if (rp == nullptr) rp = r.probe(pp.kind);
    if (rp == nullptr) continue;
    const std::string at = "probe " + pp.name + ": ";
    add(out, at + "items", pp.items ? std::to_string(pp.items) : "", rp->items ? std::to_string(rp->items) : "",
        pp.items == rp->items);
    for (auto it = pp.params.begin(); it != pp.params.end(); ++it) {
      if (!rp->params.contains(it.key())) {
        out.push_back({SetupDifference::Kind::differs, at + it.key(), text_of(it.value()), "(not set: its default)"});
        continue;
      }
      const json& rv = rp->params[it.key()];
      if (rv != it.value()) out.push_back({SetupDifference::Kind::differs, at + it.key(), text_of(it.value()), text_of(rv)});
    }
  }
  return out;
}

/// What makes the run's numbers unlike the published ones before any cell is set beside them: the
/// grids' reference type (their first K and V types, e.g. bf16) missing from the run, and other item
/// counts per cell.
std::vector<std::string> unlike_published(const Summary& run, const Published& published,
                                          const std::vector<std::string>& run_probes) {
  std::vector<std::string> out;
  std::set<std::string> run_k;
  for (const SummaryCell& c : run.cells) run_k.insert(c.type_k);
  std::set<std::string> said;
  for (const auto& g : published.grids) {
    if (g.k_types.empty() || g.v_types.empty() || run_k.empty()) continue;
    const std::string ref = g.k_types.front() + "/" + g.v_types.front();
    if (run_k.contains(g.k_types.front()) || !said.insert(ref).second) continue;
    std::string types;
    for (const auto& t : run_k) types += (types.empty() ? "" : ", ") + t;
    out.push_back("the published grids are referenced to " + ref + " (their first row and column); this run has no " +
                  g.k_types.front() + " cells (its K types: " + types + "), so those are \"not run\": put " +
                  g.k_types.front() + " in the grid (and grid.reference) to compare like with like");
  }
  for (const auto& name : run_probes) {
    const SummaryProbe* p = run.probe(name);
    if (p == nullptr || published.items_per_cell == 0 || p->items == 0 || p->items == published.items_per_cell) continue;
    out.push_back("probe " + name + " has " + std::to_string(p->items) + " items per cell, the published cells " +
                  std::to_string(published.items_per_cell) + ": the means are of other items and their CIs of other widths");
  }
  return out;
}

/// How the run's model was matched with the published one: by identity, or by name with a caveat.
void model_caveat(const Summary& run, const Published& published, PublishedComparison& cmp) {
  const std::string& sha = published.setup.model_sha256;
  const bool by_identity = !sha.empty() && std::any_of(run.models.begin(), run.models.end(),
                                                       [&](const SummaryModel& m) { return m.sha256 == sha; });
  if (by_identity) return;
  if (sha.empty()) {
    cmp.caveats.push_back("the file gives no model sha256: the run's model is matched by name only" +
                          (published.setup.model.empty() ? std::string() : " (published: " + published.setup.model + ")") +
                          ", so its figures may be of another model");
  } else {
    cmp.caveats.push_back("no model of the run has the published sha256 " + sha.substr(0, 12) +
                          "…: the figures are set beside the run's models by name, of other weights");
  }
}

}  // namespace kvsweep::report

#include "kvsweep/report/analysis/manifest_changes.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <utility>

#include "kvsweep/core/cell_key.hpp"
#include "kvsweep/report/input/json_fields.hpp"
#include "kvsweep/sweep/store/input_hashes.hpp"
#include "kvsweep/sweep/store/run_identity.hpp"

namespace kvsweep::report {

namespace {

using json = nlohmann::json;
using Value = std::optional<std::string>;

constexpr std::size_t kCellsNamed = 3;  // a change in more cells names these and counts the rest
constexpr std::size_t kShortSha = 12;

/// A scalar as text: a string as is, a number or boolean as JSON writes it; absent, null, "" and
/// documents read as nullopt.
Value scalar_text(const json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  const auto it = j.find(key);
  if (it == j.end() || it->is_null() || it->is_structured()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>().empty() ? Value{} : Value{it->get<std::string>()};
  return it->dump();
}

/// "-fa on -t 1"; nullopt when absent or not an array of strings.
Value joined_args(const json& j) {
  const auto it = j.is_object() ? j.find("args") : j.end();
  if (it == j.end() || !it->is_array()) return std::nullopt;
  std::string out;
  for (const auto& a : *it) {
    if (!a.is_string()) return std::nullopt;
    out += (out.empty() ? "" : " ") + a.get<std::string>();
  }
  return out;
}

std::map<std::string, std::string> string_map(const json& j) {
  std::map<std::string, std::string> out;
  if (!j.is_object()) return out;
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it->is_string()) out[it.key()] = it->get<std::string>();
  return out;
}

void add(std::vector<ManifestChange>& out, ManifestChange c) {
  if (c.before != c.after) out.push_back(std::move(c));
}

/// Every key of `a` or `b` whose value differs, each a change of `area` named by the key.
void diff_maps(const std::map<std::string, std::string>& a, const std::map<std::string, std::string>& b,
               ChangeArea area, const std::string& variant, std::vector<ManifestChange>& out) {
  std::set<std::string> names;
  for (const auto& [k, v] : a) names.insert(k);
  for (const auto& [k, v] : b) names.insert(k);
  auto value = [](const auto& m, const std::string& k) {
    const auto it = m.find(k);
    return it == m.end() ? Value{} : Value{it->second};
  };
  for (const auto& name : names) add(out, {area, name, variant, {}, 0, value(a, name), value(b, name)});
}

/// The scalar fields of an object (a server's description) as text.
std::map<std::string, std::string> scalars(const json& j) {
  std::map<std::string, std::string> out;
  if (!j.is_object()) return out;
  for (auto it = j.begin(); it != j.end(); ++it)
    if (auto v = scalar_text(j, it.key().c_str())) out[it.key()] = *v;
  return out;
}

const json kNull;

/// j[key] when j is an object holding it, else null.
const json& member(const json& j, const char* key) {
  const auto it = j.is_object() ? j.find(key) : j.end();
  return it == j.end() ? kNull : *it;
}

/// The config's variants by name ({name: variant}).
std::map<std::string, json> variants_of(const json& config) {
  std::map<std::string, json> out;
  const auto it = config.is_object() ? config.find("variants") : config.end();
  if (it == config.end() || !it->is_array()) return out;
  for (const auto& v : *it)
    if (const std::string name = string_field(v, "name"); !name.empty()) out[name] = v;
  return out;
}

/// The settings the cell's server reported, when it reported them (found or declared).
const sweep::CellEffective* reported(const sweep::ManifestCell& cell) {
  return cell.effective && cell.effective->reported() ? &*cell.effective : nullptr;
}

/// A setting's value as text (a string as is, an integer as JSON writes it); nullopt when not reported.
Value setting_text(const sweep::ReportedSetting& setting, const sweep::CellEffective& effective) {
  const json v = setting.value(effective);
  if (v.is_null()) return std::nullopt;
  if (v.is_string()) return v.get<std::string>().empty() ? Value{} : Value{v.get<std::string>()};
  return v.dump();
}

void setting_changes(const sweep::Manifest& baseline, const sweep::Manifest& current, std::vector<ManifestChange>& out) {
  std::map<core::CellKey, const sweep::CellEffective*> now;
  for (const auto& c : current.cell_list())
    if (const auto* e = reported(c)) now[c.key()] = e;
  std::vector<ManifestChange> found;
  std::size_t compared = 0;
  const auto settings = sweep::reported_settings();
  for (const auto& c : baseline.cell_list()) {
    const sweep::CellEffective* before = reported(c);
    const core::CellKey& key = c.key();
    const auto it = now.find(key);
    if (!before || it == now.end()) continue;
    ++compared;
    for (const sweep::ReportedSetting& setting : settings) {
      const std::string name = setting.name;
      const Value a = setting_text(setting, *before), b = setting_text(setting, *it->second);
      if (a == b) continue;
      auto same = std::ranges::find_if(found, [&](const ManifestChange& f) {
        return f.name == name && f.before == a && f.after == b;
      });
      if (same == found.end()) same = found.insert(found.end(), {ChangeArea::setting, name, "", {}, 0, a, b});
      same->cells.push_back(key.id());
    }
  }
  // By setting, in reported_settings()' order; the same setting's changes in the order first met.
  std::ranges::stable_sort(found, {}, [&](const ManifestChange& c) {
    return std::ranges::find(settings, c.name, [](const sweep::ReportedSetting& s) { return std::string(s.name); }) -
           settings.begin();
  });
  for (auto& c : found) {
    c.cells_compared = compared;
    out.push_back(std::move(c));
  }
}

Value short_sha(const json& model) {
  const std::string sha = string_field(model, "sha256");
  return sha.empty() ? Value{} : Value{sha.substr(0, kShortSha)};
}

void model_changes(const sweep::Manifest& baseline, const sweep::Manifest& current, std::vector<ManifestChange>& out) {
  auto by_name = [](const json& models) {
    std::vector<std::pair<std::string, Value>> list;  // in the manifest's order
    if (models.is_array())
      for (const auto& m : models) list.emplace_back(string_field(m, "name"), short_sha(m));
    return list;
  };
  const auto before = by_name(baseline.models), after = by_name(current.models);
  auto find = [](const auto& list, const std::string& name) {
    const auto it = std::ranges::find(list, name, &std::pair<std::string, Value>::first);
    return it == list.end() ? Value{} : it->second;
  };
  std::set<std::string> seen;
  for (const auto* list : {&before, &after})
    for (const auto& [name, sha] : *list)
      if (seen.insert(name).second) add(out, {ChangeArea::model, name, "", {}, 0, find(before, name), find(after, name)});
}

Value kvsweep_text(const json& k) {
  const Value version = scalar_text(k, "version"), sha = scalar_text(k, "git_sha");
  if (!version && !sha) return std::nullopt;
  return version.value_or("?") + (sha ? " (" + sha->substr(0, kShortSha) + ")" : "");
}

Value int_text(const std::optional<int>& v) { return v ? Value{std::to_string(*v)} : Value{}; }

/// A value as a line shows it: attention rotation as on/off, an absent one in the area's words.
std::string shown(const Value& v, const ManifestChange& c) {
  if (!v)
    return c.area == ChangeArea::env        ? "unset"
           : c.area == ChangeArea::setting ? "not reported"
           : c.area == ChangeArea::input   ? "not read"
                                            : "none";
  if (c.area == ChangeArea::setting && c.name.starts_with("attn_rot_") && (*v == "0" || *v == "1"))
    return *v == "1" ? "on" : "off";
  if (v->empty()) return "(empty)";
  return *v;
}

std::string cells_text(const ManifestChange& c) {
  if (c.cells.size() == c.cells_compared && c.cells_compared > 1) return " in every cell";
  std::string out = " in ";
  for (std::size_t i = 0; i < c.cells.size() && i < kCellsNamed; ++i) out += (i ? ", " : "") + c.cells[i];
  if (c.cells.size() > kCellsNamed) out += " and " + std::to_string(c.cells.size() - kCellsNamed) + " more";
  return out;
}

/// What only the runs' identities hold (the manifest's other parts are compared above): the embedder's
/// model, and each probe's input files as the identity check compares them.
void identity_changes(const sweep::RunIdentity& baseline, const sweep::RunIdentity& current,
                      std::vector<ManifestChange>& out) {
  const auto sha = [](const std::string& s) { return s.empty() ? Value{} : Value{s.substr(0, kShortSha)}; };
  add(out, {ChangeArea::embedder, "", "", {}, 0, sha(baseline.embedder_sha256), sha(current.embedder_sha256)});
  for (const auto& c : sweep::changed_inputs(baseline.probes, current.probes))
    add(out, {ChangeArea::input, "'" + c.probe + "' " + c.key + " " + c.path, "", {}, 0, sha(c.sha256_a), sha(c.sha256_b)});
}

}  // namespace

std::string_view to_string(ChangeArea area) {
  switch (area) {
    case ChangeArea::host: return "host";
    case ChangeArea::setting: return "setting";
    case ChangeArea::context: return "context";
    case ChangeArea::server: return "server";
    case ChangeArea::model: return "model";
    case ChangeArea::env: return "env";
    case ChangeArea::args: return "args";
    case ChangeArea::kvsweep: return "kvsweep";
    case ChangeArea::embedder: return "embedder";
    case ChangeArea::input: return "input";
  }
  return "setting";
}

json compute_of(const sweep::Manifest& manifest) {
  return manifest.compute.is_null() ? sweep::host_compute(manifest.cell_list()) : manifest.compute;
}

bool compute_differs(const sweep::Manifest& baseline, const sweep::Manifest& current) {
  const json before = compute_of(baseline), after = compute_of(current);
  return before.is_object() && after.is_object() && before != after;
}

std::vector<ManifestChange> manifest_changes(const sweep::Manifest& baseline, const sweep::Manifest& current,
                                             const sweep::RunIdentity* baseline_identity,
                                             const sweep::RunIdentity* current_identity) {
  std::vector<ManifestChange> out;
  // First: the host llama.cpp computed on moves every greedy output a little, whatever else changed.
  if (compute_differs(baseline, current))
    out.push_back({ChangeArea::host, "", "", {}, 0, sweep::describe_compute(compute_of(baseline)),
                   sweep::describe_compute(compute_of(current))});
  setting_changes(baseline, current, out);

  // The environment as launched when both runs recorded it; else what both configs set.
  const json& server_before = member(baseline.config, "server");
  const json& server_after = member(current.config, "server");
  // A baseline that is a summary.json alone has no config: what only configs say is not compared.
  const bool configs = baseline.config.is_object() && current.config.is_object();
  if (baseline.server_env && current.server_env) {
    diff_maps(*baseline.server_env, *current.server_env, ChangeArea::env, "", out);
  } else if (configs) {
    diff_maps(string_map(member(server_before, "env")), string_map(member(server_after, "env")), ChangeArea::env, "", out);
  }
  if (configs) add(out, {ChangeArea::args, "", "", {}, 0, joined_args(server_before), joined_args(server_after)});
  const auto variants_before = variants_of(baseline.config), variants_after = variants_of(current.config);
  std::set<std::string> variants;
  for (const auto* m : {&variants_before, &variants_after})
    for (const auto& [name, v] : *m) variants.insert(name);
  for (const auto& name : configs ? variants : std::set<std::string>{}) {
    const json& a = variants_before.contains(name) ? variants_before.at(name) : kNull;
    const json& b = variants_after.contains(name) ? variants_after.at(name) : kNull;
    diff_maps(string_map(member(a, "env")), string_map(member(b, "env")), ChangeArea::env, name, out);
    add(out, {ChangeArea::args, "", name, {}, 0, joined_args(a), joined_args(b)});
  }

  // Absent from one side (an older baseline summary) is not recorded, not changed.
  if (baseline.n_ctx && current.n_ctx)
    add(out, {ChangeArea::context, "n_ctx", "", {}, 0, int_text(baseline.n_ctx), int_text(current.n_ctx)});
  diff_maps(scalars(baseline.server), scalars(current.server), ChangeArea::server, "", out);
  std::set<std::string> own_binaries;
  for (const json* vs : {&baseline.variant_servers, &current.variant_servers})
    if (vs->is_object())
      for (auto it = vs->begin(); it != vs->end(); ++it) own_binaries.insert(it.key());
  for (const auto& name : own_binaries) {
    auto of = [&](const json& vs) { return vs.is_object() && vs.contains(name) ? scalars(vs[name]) : std::map<std::string, std::string>{}; };
    diff_maps(of(baseline.variant_servers), of(current.variant_servers), ChangeArea::server, name, out);
  }
  model_changes(baseline, current, out);
  add(out, {ChangeArea::kvsweep, "", "", {}, 0, kvsweep_text(baseline.kvsweep), kvsweep_text(current.kvsweep)});
  if (baseline_identity && current_identity) identity_changes(*baseline_identity, *current_identity, out);
  return out;
}

std::string explain(const ManifestChange& c) {
  const std::string variant = c.variant.empty() ? "" : "variant " + c.variant + " ";
  std::string what;
  switch (c.area) {
    case ChangeArea::host: what = "host"; break;
    case ChangeArea::setting: what = c.name + cells_text(c); break;
    case ChangeArea::context: what = c.name; break;
    case ChangeArea::server: what = (c.variant.empty() ? "server " : "server of variant " + c.variant + " ") + c.name; break;
    case ChangeArea::model: what = "model " + c.name + " sha256"; break;
    case ChangeArea::env: what = variant + "env " + c.name; break;
    case ChangeArea::args: what = c.variant.empty() ? "server args" : variant + "args"; break;
    case ChangeArea::kvsweep: what = "kvsweep"; break;
    case ChangeArea::embedder: what = "embedder model sha256"; break;
    case ChangeArea::input: what = "probe " + c.name + " sha256"; break;
  }
  return what + ": " + shown(c.before, c) + " → " + shown(c.after, c);
}

void manifest_changes_section(Document& doc, const std::vector<ManifestChange>& changes) {
  if (changes.empty()) return;
  doc.paragraph(Text{strong("What changed since the baseline"), plain(" (baseline → this run):")});
  std::vector<Text> items;
  for (const auto& c : changes) items.push_back({plain(explain(c))});
  doc.list(std::move(items));
}

}  // namespace kvsweep::report

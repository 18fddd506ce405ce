#include "kvsweep/sweep/store/growth.hpp"

#include <map>
#include <set>

namespace kvsweep::sweep {

namespace {

using json = nlohmann::json;

/// A value as a message shows it: short, on one line.
std::string shown(const json& v) {
  std::string text = v.is_null() ? std::string("(none)") : v.dump();
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  return text;
}

void changed(Growth& g, const std::string& path, const json& before, const json& now) {
  g.changed.push_back(path + ": " + shown(before) + " → " + shown(now));
}

void compare_rest(Growth& g, const std::string& path, const json& before, const json& now,
                  const std::set<std::string>& skip);

/// Two values that must be equal; objects key by key, so that a change is named by its own path.
void compare_equal(Growth& g, const std::string& path, const json& before, const json& now) {
  if (before.is_object() && now.is_object()) compare_rest(g, path, before, now, {});
  else if (before != now) changed(g, path, before, now);
}

/// Every key of `before` and `now` but `skip`, each equal.
void compare_rest(Growth& g, const std::string& path, const json& before, const json& now,
                  const std::set<std::string>& skip) {
  std::set<std::string> keys;
  for (const json* side : {&before, &now})
    if (side->is_object())
      for (auto it = side->begin(); it != side->end(); ++it) keys.insert(it.key());
  for (const auto& k : keys) {
    if (skip.contains(k)) continue;
    const json b = before.is_object() ? before.value(k, json()) : json();
    const json n = now.is_object() ? now.value(k, json()) : json();
    compare_equal(g, path.empty() ? k : path + "." + k, b, n);
  }
}

/// A list that may only gain entries: each earlier entry is still there.
void compare_growing_list(Growth& g, const std::string& path, const json& before, const json& now) {
  const json b = before.is_null() ? json::array() : before;
  const json n = now.is_null() ? json::array() : now;
  if (!b.is_array() || !n.is_array()) {
    if (b != n) changed(g, path, b, n);
    return;
  }
  std::vector<std::string> gone;
  for (const auto& e : b)
    if (std::find(n.begin(), n.end(), e) == n.end()) gone.push_back(shown(e));
  if (!gone.empty()) {
    std::string list;
    for (const auto& e : gone) list += (list.empty() ? "" : ", ") + e;
    g.changed.push_back(path + ": no longer lists " + list + " (a run grows by adding entries, not removing them)");
    return;
  }
  if (n.size() > b.size())
    g.added.push_back(path + ": " + std::to_string(n.size() - b.size()) + " more (" + std::to_string(b.size()) + " → " +
                      std::to_string(n.size()) + ")");
}

/// A list that may only lose entries (exclude: fewer cells left out is more cells).
void compare_shrinking_list(Growth& g, const std::string& path, const json& before, const json& now) {
  const json b = before.is_array() ? before : json::array();
  const json n = now.is_array() ? now : json::array();
  for (const auto& e : n)
    if (std::find(b.begin(), b.end(), e) == b.end()) {
      g.changed.push_back(path + ": now leaves out " + shown(e) + " (a cell the run may have)");
      return;
    }
  if (n.size() < b.size()) g.added.push_back(path + ": " + std::to_string(b.size() - n.size()) + " fewer left out");
}

/// Entries of a list of objects by their "name": earlier ones unchanged, new ones added.
void compare_named(Growth& g, const std::string& path, const json& before, const json& now) {
  std::map<std::string, json> b, n;
  if (before.is_array())
    for (const auto& e : before) b[e.value("name", "")] = e;
  if (now.is_array())
    for (const auto& e : now) n[e.value("name", "")] = e;
  for (const auto& [name, e] : b) {
    const auto it = n.find(name);
    if (it == n.end()) g.changed.push_back(path + "[" + name + "]: removed");
    else compare_equal(g, path + "[" + name + "]", e, it->second);
  }
  for (const auto& [name, e] : n)
    if (!b.contains(name)) g.added.push_back(path + "[" + name + "]: new");
}

void compare_grid(Growth& g, const json& before, const json& now) {
  for (const char* k : {"k", "v", "include"}) compare_growing_list(g, std::string("grid.") + k, before.value(k, json()), now.value(k, json()));
  compare_shrinking_list(g, "grid.exclude", before.value("exclude", json()), now.value("exclude", json()));
  compare_rest(g, "grid", before, now, {"k", "v", "include", "exclude"});
}

/// A probe's config with "k" (recall's older name) read as "sample_size".
json normalised(json probe) {
  if (probe.is_object() && probe.contains("k") && !probe.contains("sample_size")) {
    probe["sample_size"] = probe["k"];
    probe.erase("k");
  }
  return probe;
}

void compare_probe(Growth& g, const json& before_raw, const json& now_raw) {
  const json before = normalised(before_raw), now = normalised(now_raw);
  const std::string name = before.value("name", before.value("kind", ""));
  const std::string path = "probes[" + name + "]";
  if (before.value("kind", "") != now.value("kind", "")) {
    changed(g, path + ".kind", before.value("kind", json()), now.value("kind", json()));
    return;
  }
  const auto& items = item_keys(before.value("kind", ""));
  std::set<std::string> skip(items.begin(), items.end());
  // Which metrics gate decides verdicts in the report, never what an item answers.
  skip.insert("gate");
  if (before.value("gate", json()) != now.value("gate", json()))
    g.added.push_back(path + ".gate: " + shown(before.value("gate", json())) + " → " + shown(now.value("gate", json())) +
                      " (what gates the verdicts; the answers stand)");
  for (const auto& k : items) {
    const json b = before.value(k, json()), n = now.value(k, json());
    if (b.is_number() || n.is_number()) {
      if (!b.is_number() || !n.is_number() || n.get<double>() < b.get<double>()) changed(g, path + "." + k, b, n);
      else if (n != b) g.added.push_back(path + "." + k + ": " + shown(b) + " → " + shown(n));
    } else {
      compare_growing_list(g, path + "." + k, b, n);
    }
  }
  compare_rest(g, path, before, now, skip);
}

/// Probes by name (a probe without one is named by its kind, as the config names it).
void compare_probes(Growth& g, const json& before, const json& now) {
  const auto name_of = [](const json& p) { return p.value("name", p.value("kind", "")); };
  std::map<std::string, json> n;
  if (now.is_array())
    for (const auto& p : now) n[name_of(p)] = p;
  std::set<std::string> seen;
  if (before.is_array()) {
    for (const auto& p : before) {
      seen.insert(name_of(p));
      const auto it = n.find(name_of(p));
      if (it == n.end()) g.changed.push_back("probes[" + name_of(p) + "]: removed");
      else compare_probe(g, p, it->second);
    }
  }
  for (const auto& [name, p] : n)
    if (!seen.contains(name)) g.added.push_back("probes[" + name + "]: new (" + p.value("kind", "") + ")");
}

}  // namespace

json record_form(const config::Config& c) {
  json j = config::to_json(c);
  // Like the slot environments: values of secret-looking names (…KEY…, …TOKEN…) never reach the run directory.
  j["server"]["env"] = config::env_for_record(c.server.env);
  for (std::size_t i = 0; i < c.variants.size(); ++i) j["variants"][i]["env"] = config::env_for_record(c.variants[i].env);
  return j;
}

const std::vector<std::string>& item_keys(const std::string& kind) {
  static const std::map<std::string, std::vector<std::string>> keys = {
      {"complete", {"prompts"}},           {"divergence", {"prompts"}},
      {"telephone", {"texts", "seeds"}},    {"recall", {"sample_size"}},
      {"toolcall", {"lengths", "seeds"}},   {"speed", {"depths"}},
  };
  static const std::vector<std::string> none;
  const auto it = keys.find(kind);
  return it == keys.end() ? none : it->second;
}

Growth compare_for_growth(const json& before, const json& now) {
  Growth g;
  compare_named(g, "models", before.value("models", json()), now.value("models", json()));
  compare_named(g, "variants", before.value("variants", json()), now.value("variants", json()));
  compare_grid(g, before.value("grid", json::object()), now.value("grid", json::object()));
  compare_probes(g, before.value("probes", json()), now.value("probes", json()));
  compare_rest(g, "", before, now, {"models", "variants", "grid", "probes", "output_dir", "sweep"});
  return g;
}

}  // namespace kvsweep::sweep

#include <algorithm>

#include "kvsweep/config/keys.hpp"
#include "kvsweep/probe/complete/complete.hpp"
#include "kvsweep/probe/divergence/divergence.hpp"
#include "kvsweep/probe/kld/kld.hpp"
#include "kvsweep/probe/longkl/longkl.hpp"
#include "kvsweep/probe/probe.hpp"
#include "kvsweep/probe/recall/recall.hpp"
#include "kvsweep/probe/speed/speed.hpp"
#include "kvsweep/probe/telephone/telephone.hpp"
#include "kvsweep/probe/toolcall/toolcall.hpp"
#include "kvsweep/probe/twins/twins.hpp"

namespace kvsweep::probe {

namespace {
using Factory = std::unique_ptr<Probe> (*)(const nlohmann::json&, const ConfigSource&);
struct Entry {
  const char* kind;
  Factory make;
};
const std::vector<Entry>& registry() {
  static const std::vector<Entry> entries = {
      {"complete", &make_complete_probe},
      {"divergence", &make_divergence_probe},
      {"kld", &make_kld_probe},
      {"longkl", &make_longkl_probe},
      {"telephone", &make_telephone_probe},
      {"recall", &make_recall_probe},
      {"toolcall", &make_toolcall_probe},
      {"speed", &make_speed_probe},
      {"twins", &make_twins_probe},
  };
  return entries;
}
/// A probe's "gate": the quality metrics that decide its verdicts (the report's; every quality metric
/// when absent). Each must be one of the probe's quality metrics, named once.
void check_gate(const nlohmann::json& gate, const Probe& probe, const config::Site& site) {
  std::vector<std::string> quality;
  for (const auto& m : probe.metrics())
    if (m.is_judged()) quality.push_back(m.name);
  if (!gate.is_array() || gate.empty())
    site.fail("expected a non-empty array of the probe's quality metrics (" + [&] {
      std::string list;
      for (const auto& q : quality) list += (list.empty() ? "" : ", ") + q;
      return list;
    }() + ")");
  std::vector<std::string> seen;
  for (std::size_t i = 0; i < gate.size(); ++i) {
    if (!gate[i].is_string()) site.index(i).fail("expected a metric name (a string)");
    const std::string name = gate[i].get<std::string>();
    if (std::find(quality.begin(), quality.end(), name) == quality.end())
      site.index(i).fail("'" + name + "' is not a quality metric of " + probe.kind() +
                         config::did_you_mean_or_list(name, quality));
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) site.index(i).fail("'" + name + "' is named twice");
    seen.push_back(name);
  }
}

}  // namespace

std::vector<std::string> probe_kinds() {
  std::vector<std::string> out;
  for (const auto& e : registry()) out.emplace_back(e.kind);
  return out;
}

std::unique_ptr<Probe> make_probe(const nlohmann::json& cfg, const ConfigSource& site) {
  const config::Site& s = site.site;
  if (!cfg.is_object()) s.fail("expected an object with a \"kind\"");
  std::string kind = config::get_string(cfg, "kind", "", s);
  if (kind.empty()) s.child("kind").fail("missing; one of: " + [] {
    std::string k;
    for (const auto& x : probe_kinds()) k += (k.empty() ? "" : ", ") + x;
    return k;
  }());
  for (const auto& e : registry()) {
    if (kind != e.kind) continue;
    if (!cfg.contains("gate")) return e.make(cfg, site);
    nlohmann::json rest = cfg;
    rest.erase("gate");
    auto made = e.make(rest, site);
    check_gate(cfg["gate"], *made, s.child("gate"));
    return made;
  }
  std::string msg = "unknown probe kind '" + kind + "'";
  msg += config::did_you_mean(kind, probe_kinds());
  std::string k;
  for (const auto& x : probe_kinds()) k += (k.empty() ? "" : ", ") + x;
  s.child("kind").fail(msg + "; known: " + k);
}

}  // namespace kvsweep::probe

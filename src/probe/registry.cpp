#include <algorithm>

#include "kvsweep/config/keys.hpp"
#include "kvsweep/probe/complete.hpp"
#include "kvsweep/probe/divergence.hpp"
#include "kvsweep/probe/kld.hpp"
#include "kvsweep/probe/probe.hpp"
#include "kvsweep/probe/recall.hpp"
#include "kvsweep/probe/speed.hpp"
#include "kvsweep/probe/telephone.hpp"
#include "kvsweep/probe/toolcall.hpp"

namespace kvsweep::probe {

namespace {
using Factory = std::unique_ptr<Probe> (*)(const nlohmann::json&, const ConfigSite&);
struct Entry {
  const char* kind;
  Factory make;
};
const std::vector<Entry>& registry() {
  static const std::vector<Entry> entries = {
      {"complete", &make_complete_probe},
      {"divergence", &make_divergence_probe},
      {"kld", &make_kld_probe},
      {"telephone", &make_telephone_probe},
      {"recall", &make_recall_probe},
      {"toolcall", &make_toolcall_probe},
      {"speed", &make_speed_probe},
  };
  return entries;
}
}  // namespace

std::vector<std::string> probe_kinds() {
  std::vector<std::string> out;
  for (const auto& e : registry()) out.emplace_back(e.kind);
  return out;
}

std::unique_ptr<Probe> make_probe(const nlohmann::json& cfg, const ConfigSite& site) {
  config::Site s(site.file, site.path);
  if (!cfg.is_object()) s.fail("expected an object with a \"kind\"");
  std::string kind = config::get_string(cfg, "kind", "", s);
  if (kind.empty()) s.child("kind").fail("missing; one of: " + [] {
    std::string k;
    for (const auto& x : probe_kinds()) k += (k.empty() ? "" : ", ") + x;
    return k;
  }());
  for (const auto& e : registry())
    if (kind == e.kind) return e.make(cfg, site);
  std::string msg = "unknown probe kind '" + kind + "'";
  msg += config::did_you_mean(kind, probe_kinds());
  std::string k;
  for (const auto& x : probe_kinds()) k += (k.empty() ? "" : ", ") + x;
  s.child("kind").fail(msg + "; known: " + k);
}

}  // namespace kvsweep::probe

#include <cmath>

#include "kvsweep/config/keys.hpp"
#include "kvsweep/probe/twins/twins.hpp"

namespace kvsweep::probe {

namespace {

const std::vector<std::string> kKeys = {"kind",     "name", "seed",  "families", "twins",   "key_words", "value_words",
                                        "distance", "at",   "value", "gap",      "queries", "top_n",     "bins", "tables"};

int int_in(const nlohmann::json& cfg, const std::string& key, long long fallback, long long lo, long long hi,
           const config::Site& site) {
  return static_cast<int>(config::get_int_in(cfg, key, fallback, lo, hi, site));
}

std::vector<double> read_bins(const nlohmann::json& cfg, const std::vector<double>& fallback, const config::Site& site) {
  if (!cfg.contains("bins")) return fallback;
  const nlohmann::json& list = cfg["bins"];
  const config::Site at = site.child("bins");
  if (!list.is_array() || list.empty() || list.size() > 16)
    at.fail("expected an array of 1 to 16 ascending margins in nats, got " + config::shown(list));
  std::vector<double> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_number() || !std::isfinite(list[i].get<double>()))
      at.index(i).fail("expected a number (a margin in nats), got " + config::shown(list[i]));
    const double v = list[i].get<double>();
    if (!out.empty() && v <= out.back())
      at.index(i).fail("must be greater than bins[" + std::to_string(i - 1) + "] (" + config::shown(list[i - 1]) +
                       "), got " + config::shown(list[i]));
    out.push_back(v);
  }
  return out;
}

/// "distance": a number or a non-empty list of numbers, each 1–4 and leaving 2 of the key's words unedited.
std::vector<int> read_distances(const nlohmann::json& cfg, int key_words, int twins, const config::Site& site) {
  if (!cfg.contains("distance")) return {1};
  const nlohmann::json& v = cfg["distance"];
  const config::Site at = site.child("distance");
  const nlohmann::json list = v.is_array() ? v : nlohmann::json::array({v});
  if (list.empty() || list.size() > 16) at.fail("expected a number of words (1–4) or a list of 1 to 16 of them");
  std::vector<int> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const config::Site here = v.is_array() ? at.index(i) : at;
    if (!list[i].is_number_integer() || list[i].get<long long>() < 1 || list[i].get<long long>() > 4)
      here.fail("expected a number of words from 1 to 4, got " + config::shown(list[i]));
    const int d = list[i].get<int>();
    if (twins > 1 && key_words - d < 2)
      here.fail("must leave at least 2 of the key's " + std::to_string(key_words) + " words (key_words) unedited, got " +
                std::to_string(d));
    out.push_back(d);
  }
  return out;
}

}  // namespace

TwinsConfig parse_twins_config(const nlohmann::json& cfg, const ConfigSource& where) {
  const config::Site& site = where.site;
  config::check_keys(cfg, kKeys, site);
  TwinsConfig c;
  c.name = config::get_string(cfg, "name", c.name, site);
  if (c.name.empty()) site.child("name").fail("must not be empty");
  c.seed = static_cast<std::uint64_t>(config::get_int_in(cfg, "seed", 42, 0, (1LL << 62), site));
  c.families = int_in(cfg, "families", c.families, 1, 1000, site);
  c.twins = int_in(cfg, "twins", c.twins, 1, 32, site);
  c.key_words = int_in(cfg, "key_words", c.key_words, 2, 16, site);
  c.value_words = int_in(cfg, "value_words", c.value_words, 1, 8, site);
  c.distances = read_distances(cfg, c.key_words, c.twins, site);
  const std::string at = config::get_one_of(cfg, "at", "end", {"end", "start", "both"}, site);
  c.sides = at == "end"     ? std::vector<TwinsSide>{TwinsSide::end}
            : at == "start" ? std::vector<TwinsSide>{TwinsSide::start}
                            : std::vector<TwinsSide>{TwinsSide::end, TwinsSide::start};
  c.value = config::get_one_of(cfg, "value", "distinct", {"distinct", "near"}, site) == "near" ? TwinsValue::near
                                                                                                : TwinsValue::distinct;
  c.gap = int_in(cfg, "gap", c.gap, 0, c.families - 1, site);
  if (c.families % (c.gap + 1) != 0)
    site.child("gap").fail("families (" + std::to_string(c.families) + ") must be a multiple of gap + 1 (" +
                           std::to_string(c.gap + 1) + "): families are laid out in blocks of gap + 1");
  c.queries = int_in(cfg, "queries", c.twins, 1, c.twins, site);
  c.tables = int_in(cfg, "tables", c.tables, 1, 1000, site);
  c.top_n = int_in(cfg, "top_n", c.top_n, 2, 1000, site);
  c.bins = read_bins(cfg, c.bins, site);
  return c;
}

}  // namespace kvsweep::probe

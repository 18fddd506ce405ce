#include "kvsweep/cli/twins_operating_point.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

#include "kvsweep/cli/commands.hpp"
#include "kvsweep/cli/dry_run.hpp"
#include "kvsweep/core/redact.hpp"
#include "kvsweep/report/format.hpp"
#include "kvsweep/sweep/plan/plan.hpp"
#include "kvsweep/sweep/run/runner.hpp"
#include "kvsweep/sweep/store/run_store.hpp"

namespace kvsweep::cli {

namespace {

constexpr double kOperating = 0.95;  // the reference's accuracy an operating point keeps (issue 54)

void print(const std::string& text) { std::fputs(core::redact(text).c_str(), stdout); }

struct Setting {
  std::string probe;  // the twins probe searched
  std::string name;   // the variant's probe name
  int distance = 1;
  std::string at;
  std::size_t n = 0, correct = 0;
  std::vector<double> margins;
};

double median(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

}  // namespace

void print_twins_operating_points(const config::Config& cfg, const std::vector<std::unique_ptr<probe::Probe>>& probes,
                                  server::Backend& backend) {
  std::vector<std::unique_ptr<probe::Probe>> dial;
  std::vector<Setting> settings;
  std::map<std::string, double> small;  // per searched probe: a margin below its bins' last edge is small
  std::vector<std::string> searched;    // the probes' configs without the dial: two alike are searched once
  std::string names;
  for (std::size_t i = 0; i < probes.size() && i < cfg.probes.size(); ++i) {
    if (probes[i]->kind() != "twins" || cfg.probes[i].value("twins", 4) == 1) continue;
    nlohmann::json rest = cfg.probes[i];
    for (const char* key : {"gate", "name", "distance", "at"}) rest.erase(key);
    if (std::find(searched.begin(), searched.end(), rest.dump()) != searched.end()) continue;
    searched.push_back(rest.dump());
    const nlohmann::json bins = cfg.probes[i].value("bins", nlohmann::json::array({1, 4, 10}));
    small[probes[i]->name()] = bins.empty() ? 10.0 : bins.back().get<double>();
    for (const char* at : {"end", "start"}) {
      for (int d = 1; d <= 4; ++d) {
        nlohmann::json variant = cfg.probes[i];
        variant.erase("gate");
        variant["distance"] = d;
        variant["at"] = at;
        variant["key_words"] = std::max(variant.value("key_words", 6), d + 2);
        variant["name"] = probes[i]->name() + "-d" + std::to_string(d) + "-" + at;
        const std::string site = "probes[" + std::to_string(i) + "] (searched: distance " + std::to_string(d) + ", " + at + ")";
        dial.push_back(probe::make_probe(variant, probe::ConfigSource{{"dry-run", site}, cfg.base_dir}));
        settings.push_back({probes[i]->name(), dial.back()->name(), d, at, 0, 0, {}});
        names += (names.empty() ? "" : "|") + dial.back()->name();
      }
    }
  }
  if (dial.empty() || cfg.models.empty()) return;
  const std::filesystem::path runs = measure_directory();
  sweep::RunOptions options;
  std::vector<std::string> clauses = {"model=" + cfg.models.front().name, "k=" + cfg.grid.reference.type_k,
                                      "v=" + cfg.grid.reference.type_v, "probe=" + names};
  if (!cfg.variants.empty()) clauses.push_back("variant=" + cfg.variants.front().name);
  std::string filter;
  for (const auto& c : clauses) filter += (filter.empty() ? "" : ",") + c;
  options.filter = sweep::parse_filter({filter});
  const std::string cell = cfg.models.front().name + (cfg.variants.empty() ? "" : "/" + cfg.variants.front().name) +
                           "/" + cfg.grid.reference.type_k + "/" + cfg.grid.reference.type_v;
  {
    auto store = sweep::RunStore::create((runs / "run").string());
    if (!store) {
      print("twins operating point: not measured: " + store.error().message + "\n");
      return;
    }
    Quiet quiet;
    sweep::Runner runner(cfg, dial, backend, *store, quiet, cancel_flag(), options);
    runner.run();
    for (const auto& r : store->records()) {
      if (!r.ok()) continue;
      for (auto& s : settings) {
        if (s.name != r.probe) continue;
        ++s.n;
        if (r.metrics.value("recalled", 0) == 1) ++s.correct;
        if (r.metrics.contains("margin") && r.metrics["margin"].is_number()) s.margins.push_back(r.metrics["margin"]);
      }
    }
  }
  std::error_code ec;
  std::filesystem::remove_all(runs, ec);

  // Per searched probe, the setting the reference answers ≥ 95 % at with the smallest median margin.
  std::map<std::string, const Setting*> best;
  for (const auto& s : settings) {
    if (s.n == 0) continue;
    if (static_cast<double>(s.correct) < kOperating * static_cast<double>(s.n)) continue;
    const Setting*& b = best[s.probe];
    if (b == nullptr || median(s.margins) < median(b->margins)) b = &s;
  }
  const std::string at_least = "≥ " + report::fixed(kOperating * 100, 0) + " %";
  std::string probe;
  for (const auto& s : settings) {
    if (s.probe != probe) {
      probe = s.probe;
      print("twins operating point (" + probe + ", measured now on " + cell +
            "): the reference's answers and median margin per setting, the rest of the probe's config kept\n");
    }
    print("  distance " + std::to_string(s.distance) + " at the " + s.at + ": " + std::to_string(s.correct) + "/" +
          std::to_string(s.n) + " correct, median margin " + report::fixed(median(s.margins), 2) + " nats\n");
    if (&s != &settings.back() && settings[static_cast<std::size_t>(&s - settings.data()) + 1].probe == probe) continue;
    const auto b = best.find(probe);
    if (b == best.end() || b->second == nullptr) {
      print("  no operating point in the range tried: the reference answers " + at_least + " at no setting\n");
    } else if (!(median(b->second->margins) < small[probe])) {
      print("  no operating point in the range tried: where the reference answers " + at_least +
            " the smallest median margin is " + report::fixed(median(b->second->margins), 2) + " nats (distance " +
            std::to_string(b->second->distance) + " at the " + b->second->at + "), not below the bins' last edge (" +
            report::fixed(small[probe], 2) + "): the high-margin regime\n");
    } else {
      print("  operating point: distance " + std::to_string(b->second->distance) + " at the " + b->second->at +
            " (the smallest median margin, " + report::fixed(median(b->second->margins), 2) +
            " nats, where the reference answers " + at_least + ")\n");
    }
  }
}

}  // namespace kvsweep::cli

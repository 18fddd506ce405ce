#include "kvsweep/sweep/filter_check.hpp"

#include <algorithm>

#include "kvsweep/config/keys.hpp"
#include "kvsweep/core/error.hpp"

namespace kvsweep::sweep {

namespace {

void add_unique(std::vector<std::string>& names, const std::string& name) {
  if (std::ranges::find(names, name) == names.end()) names.push_back(name);
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

void check_filter(const Filter& filter, const config::Config& config, const std::vector<std::string>& probe_names) {
  const std::vector<Cell> cells = grid_cells(config);
  std::vector<std::string> models, variants, ks, vs, pairs;
  for (const auto& c : cells) {
    add_unique(models, c.model);
    if (!c.variant.empty()) add_unique(variants, c.variant);
    add_unique(ks, c.type_k);
    add_unique(vs, c.type_v);
    add_unique(pairs, c.types());
  }
  for (const auto& [key, value] : filter.terms) {
    const std::vector<std::string>* known = nullptr;
    std::string what;
    if (key == "model") known = &models, what = "model";
    else if (key == "variant") known = &variants, what = "variant";
    else if (key == "k") known = &ks, what = "K type";
    else if (key == "v") known = &vs, what = "V type";
    else if (key == "cell") known = &pairs, what = "cell (K/V)";
    else if (key == "probe") known = &probe_names, what = "probe";
    if (known == nullptr || std::ranges::find(*known, value) != known->end()) continue;
    if (known->empty())
      throw core::FatalError("--only " + key + "=" + value + ": " + config.file.string() + " has no " + what + "s");
    const std::string hint = config::did_you_mean(value, *known);
    throw core::FatalError("--only " + key + "=" + value + ": no such " + what + " '" + value + "' in " +
                           config.file.string() + hint + "; the grid's: " + join(*known));
  }
  const bool any_cell = std::ranges::any_of(cells, [&](const Cell& c) { return filter.matches_cell(c); });
  const bool any_probe = std::ranges::any_of(probe_names, [&](const std::string& p) { return filter.matches_probe(p); });
  if (!any_cell || !any_probe) {
    std::string terms;
    for (const auto& [key, value] : filter.terms) terms += (terms.empty() ? "" : ",") + key + "=" + value;
    throw core::FatalError("--only " + terms + ": selects no " + (any_cell ? "probe" : "cell") + " of " +
                           config.file.string() + " (each term must hold at once; see the plan with --dry-run "
                           "without --only)");
  }
}

}  // namespace kvsweep::sweep

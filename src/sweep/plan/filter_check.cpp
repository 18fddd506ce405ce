#include "kvsweep/sweep/plan/filter_check.hpp"

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

namespace {

/// Throws when a value of the term names nothing in `known` (the grid's names for the key).
void check_term(const Filter::Term& term, const std::vector<std::string>& known, const std::string& what,
                const config::Config& config) {
  for (const auto& value : term.values) {
    if (std::ranges::find(known, value) != known.end()) continue;
    if (known.empty())
      throw core::FatalError("--only " + term.key + "=" + value + ": " + config.file.string() + " has no " + what + "s");
    const std::string hint = config::did_you_mean(value, known);
    throw core::FatalError("--only " + term.key + "=" + value + ": no such " + what + " '" + value + "' in " +
                           config.file.string() + hint + "; the grid's: " + join(known));
  }
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
  struct Known {
    const char* key;
    const std::vector<std::string>* names;
    const char* what;
  };
  const Known keys[] = {{"model", &models, "model"}, {"variant", &variants, "variant"}, {"k", &ks, "K type"},
                        {"v", &vs, "V type"},        {"cell", &pairs, "cell (K/V)"},     {"probe", &probe_names, "probe"}};
  for (const auto& clause : filter.clauses) {
    for (const auto& term : clause)
      for (const auto& known : keys)
        if (term.key == known.key) check_term(term, *known.names, known.what, config);
    Filter one;
    one.clauses.push_back(clause);
    const bool any_cell = std::ranges::any_of(cells, [&](const Cell& c) { return one.matches_cell(c); });
    const bool any_probe = std::ranges::any_of(probe_names, [&](const std::string& p) { return one.matches_probe(p); });
    if (!any_cell || !any_probe)
      throw core::FatalError("--only " + clause_text(clause) + ": selects no " + (any_cell ? "probe" : "cell") + " of " +
                             config.file.string() + " (each term of one --only must hold at once; give alternatives "
                             "as another --only or k=a|b; see the plan with --dry-run without --only)");
  }
}

}  // namespace kvsweep::sweep

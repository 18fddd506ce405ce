/// Runner::adapt and Runner::settle: the adaptive stop of a cell (sweep.adaptive, --adaptive).

#include "kvsweep/sweep/run/runner.hpp"

#include <set>

namespace kvsweep::sweep {

void Runner::adapt(const Cell& cell, std::vector<PendingItems>& todo, CellResult& r) {
  const config::AdaptiveConfig& a = m_config.sweep.adaptive;
  if (!a.enabled || cell.is_reference) return;
  const core::CellKey key = cell.key();
  for (auto& t : todo) {
    t.items = adaptive_order(std::move(t.items), a.seed);
    t.gate.emplace(*t.probe, reference_records(cell, *t.probe), t.items, a);
    // The cell's ok items from an earlier invocation, in the order they were recorded: the same
    // sequence the earlier decision saw.
    const auto done = m_store.select(
        [&](const probe::Record& rec) { return rec.ok() && rec.probe == t.probe->name() && rec.cell == key; });
    for (const auto& rec : done) t.gate->add(rec.item, rec.metrics);
    if (t.gate->settled()) {
      settle(cell, t, 0, r);
      t.items.clear();
    }
  }
  std::erase_if(todo, [](const PendingItems& t) { return t.items.empty(); });
}

bool Runner::settle(const Cell& cell, const PendingItems& t, std::size_t from, CellResult& r) {
  const core::CellKey key = cell.key();
  std::set<std::string> recorded;  // items an earlier invocation already settled
  for (const auto& rec : m_store.select([&](const probe::Record& rec) {
         return rec.status == probe::ItemStatus::skipped && rec.probe == t.probe->name() && rec.cell == key;
       }))
    recorded.insert(rec.item);
  const nlohmann::json adaptive = t.gate->describe();
  std::string verdicts;
  for (const auto& [metric, v] : adaptive["metrics"].items())
    verdicts += (verdicts.empty() ? "" : ", ") + metric + " " + v.value("verdict", "") + " (" + v.value("by", "") + ")";
  m_progress.note(cell.label() + ": " + t.probe->name() + " settled after " + std::to_string(adaptive.value("items", 0)) +
                  " item(s): " + verdicts + "; the other " + std::to_string(t.items.size() - from) +
                  " item(s) are recorded skipped/settled (`kvsweep run --resume DIR --no-adaptive` runs them)");
  for (std::size_t k = from; k < t.items.size(); ++k) {
    const probe::Item& item = t.items[k];
    ++r.items_settled;
    if (recorded.contains(item.key)) continue;
    auto rec = make_record(cell, *t.probe, item, probe::ItemStatus::skipped, "", 0.0, r.restarts + 1);
    rec.reason = "settled";
    rec.adaptive = adaptive;
    if (!append_or_stop(rec)) return false;
  }
  return true;
}

}  // namespace kvsweep::sweep

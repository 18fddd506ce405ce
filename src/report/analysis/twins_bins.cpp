#include "kvsweep/report/analysis/twins_bins.hpp"

#include <cmath>
#include <limits>
#include <map>

#include "kvsweep/report/format.hpp"
#include "kvsweep/stats/noninferiority.hpp"

namespace kvsweep::report {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kZ95 = 1.959963984540054;  // two-sided 95 %

/// The bin an item's record holds (the reference's margin, binned by the probe), or -1.
int bin_of(const ItemOutcome& item) {
  const auto& r = item.response;
  if (!item.ok || !r.is_object() || !r.contains("bin") || !r["bin"].is_number_integer()) return -1;
  return r["bin"].get<int>();
}

std::string label_of(const ItemOutcome& item) {
  const auto& r = item.response;
  return r.contains("bin_label") && r["bin_label"].is_string() ? r["bin_label"].get<std::string>() : std::string();
}

}  // namespace

std::vector<TwinsBins> twins_bins(const RunData& data, const ProbeDef& probe) {
  std::vector<TwinsBins> out;
  for (const auto& group : data.groups()) {
    std::map<int, std::string> labels;
    for (const std::size_t cell : data.grid_order()) {
      if (data.cells()[cell].group() != group) continue;
      for (const auto& item : data.items(cell, probe.name)) {
        if (const int b = bin_of(item); b >= 0) labels[b] = label_of(item);
      }
    }
    if (labels.empty()) continue;
    TwinsBins g;
    g.model = group;
    g.probe = probe.name;
    for (const std::size_t cell : data.grid_order()) {
      if (data.cells()[cell].group() != group) continue;
      TwinsBinCell c;
      c.cell = cell;
      for (const auto& [b, label] : labels) c.bins.push_back({b, label, 0, 0, 0, kNaN, {kNaN, kNaN}});
      bool any = false;
      for (const auto& item : data.items(cell, probe.name)) {
        const int b = bin_of(item);
        if (b < 0) {
          if (item.ok && data.cells()[cell].is_reference) ++g.unmeasured;
          continue;
        }
        for (auto& bin : c.bins) {
          if (bin.bin != b) continue;
          any = true;
          ++bin.n;
          const auto correct = item.metrics.find("recalled");
          const auto twin = item.metrics.find("took_twin");
          if (correct != item.metrics.end() && correct->second == 0.0) ++bin.flips;
          if (twin != item.metrics.end() && twin->second == 1.0) ++bin.took_twin;
        }
      }
      for (auto& bin : c.bins) {
        if (bin.n == 0) continue;
        bin.rate = static_cast<double>(bin.flips) / static_cast<double>(bin.n);
        bin.ci = stats::wilson(static_cast<double>(bin.flips), static_cast<double>(bin.n), kZ95);
      }
      if (!any) continue;
      if (data.cells()[cell].is_reference) g.reference_margins = c.bins;
      g.cells.push_back(std::move(c));
    }
    out.push_back(std::move(g));
  }
  return out;
}

void twins_bins_section(Document& doc, const RunData& data, const ProbeDef& probe) {
  const auto groups = twins_bins(data, probe);
  if (groups.empty()) return;
  doc.heading(3, "Flip rate by margin");
  doc.paragraph("Items are binned by the margin the reference measured (nats between the true answer's token and "
                "the best twin's, at the first answer token where they diverge); every cell is read on the same "
                "items. A flip is an answer that is not the true value (twin: it took a twin's). Wilson 95 % "
                "intervals; the lowest bin is what recalled_low gates on.");
  for (const auto& g : groups) {
    Table t;
    t.header = {"cell"};
    t.numeric = {false};
    const auto& bins = g.cells.front().bins;
    for (const auto& b : bins) {
      t.header.push_back("margin " + b.label);
      t.numeric.push_back(true);
    }
    for (const auto& c : g.cells) {
      std::vector<std::string> row = {data.cells()[c.cell].label() + (data.cells()[c.cell].is_reference ? " (ref)" : "")};
      for (const auto& b : c.bins) {
        row.push_back(b.n == 0 ? "—"
                               : fixed(b.rate, 2) + " [" + fixed(b.ci.lower, 2) + ", " + fixed(b.ci.upper, 2) + "] " +
                                     std::to_string(b.flips) + "/" + std::to_string(b.n) +
                                     (b.took_twin > 0 ? " (" + std::to_string(b.took_twin) + " twin)" : ""));
      }
      t.rows.push_back(std::move(row));
    }
    if (groups.size() > 1) doc.paragraph(g.model);
    doc.table(std::move(t));
    if (g.unmeasured > 0)
      doc.paragraph(std::to_string(g.unmeasured) + " of the reference's items have no margin (neither answer's token "
                    "in its top-N list, or no twin diverges) and sit in no bin.",
                    Paragraph::Tone::context);
  }
}

}  // namespace kvsweep::report

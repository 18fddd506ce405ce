#include "kvsweep/report/analysis/failures.hpp"

#include <algorithm>

namespace kvsweep::report {

namespace {

/// An error's first line, at most kMaxError bytes (cut at a character, then "…"): the class of a
/// failure, not the tool's log tail the record carries after it.
constexpr std::size_t kMaxError = 160;

std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  if (line.size() <= kMaxError) return line;
  std::size_t cut = kMaxError;
  while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  return line.substr(0, cut) + "…";
}

}  // namespace

bool measured(const RunData& data, std::size_t cell) {
  for (const auto& p : data.probes())
    for (const auto& item : data.items(cell, p.name))
      if (item.ok) return true;
  return false;
}

std::vector<std::string> unmeasured_groups(const RunData& data) {
  std::vector<std::string> out;
  for (const auto& group : data.groups())
    if (const auto ref = data.reference(group); ref && !measured(data, *ref)) out.push_back(group);
  return out;
}

std::string run_status(const RunData& data) {
  const std::string status = data.manifest().status_text();
  if (status == "complete" && !unmeasured_groups(data).empty()) return "failed";
  return status;
}

std::vector<ProbeFailure> failed_probes(const RunData& data) {
  std::vector<ProbeFailure> out;
  for (const auto& p : data.probes()) {
    ProbeFailure f;
    f.probe = p.name;
    bool answered = false;
    for (std::size_t cell = 0; cell < data.cells().size() && !answered; ++cell) {
      const auto& items = data.items(cell, p.name);
      if (items.empty()) continue;
      ++f.cells;
      for (const auto& item : items) {
        // An adaptive stop settles a cell only after items that answered.
        if (item.ok || item.settled) {
          answered = true;
          break;
        }
        const std::string error = first_line(item.error);
        const auto known = std::find_if(f.classes.begin(), f.classes.end(), [&](const ProbeFailure::Class& c) {
          return c.status == item.status && c.error == error;
        });
        if (known == f.classes.end()) f.classes.push_back({item.status, error, 1});
        else ++known->items;
      }
    }
    if (answered || f.cells == 0) continue;
    std::stable_sort(f.classes.begin(), f.classes.end(),
                     [](const ProbeFailure::Class& a, const ProbeFailure::Class& b) { return a.items > b.items; });
    out.push_back(std::move(f));
  }
  return out;
}

std::string explain(const ProbeFailure& f) {
  std::string classes;
  for (const auto& c : f.classes) {
    std::string what = c.status.empty() ? std::string("failed") : c.status;
    if (!c.error.empty()) what += ": " + c.error;
    if (f.classes.size() > 1) what += " (" + std::to_string(c.items) + (c.items == 1 ? " item)" : " items)");
    classes += (classes.empty() ? "" : "; ") + what;
  }
  return f.probe + ": failed on every cell (" + std::to_string(f.cells) + (f.cells == 1 ? " cell" : " cells") +
         (classes.empty() ? std::string() : "; " + classes) + ")";
}

void failures_section(Document& doc, const RunData& data) {
  for (const auto& f : failed_probes(data))
    doc.paragraph({strong("Warning"), plain(": " + explain(f) + ": it measured nothing.")}, Paragraph::Tone::warning);
}

}  // namespace kvsweep::report

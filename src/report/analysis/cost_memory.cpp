#include "kvsweep/report/analysis/cost_memory.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kvsweep/report/format.hpp"

namespace kvsweep::report {

namespace {

double total(const DeviceBuffers& d) {
  const auto part = [](double v) { return std::isfinite(v) ? v : 0.0; };
  return part(d.model_mib) + part(d.kv_mib) + part(d.compute_mib);
}

struct Row {
  std::string cell, path, device, model, kv, compute, total;
};

std::vector<Row> rows(const RunData& data, const CostTable& costs) {
  std::vector<Row> out;
  for (const auto& c : costs.cells) {
    const CellDef& cell = data.cells()[c.cell];
    Row first{cell.group() + " " + cell.types() + (cell.is_reference ? " (ref)" : ""),
              cell.path.empty() ? "—" : cell.path, "—", "—", "—", "—", "—"};
    const auto memory = memory_at(cell, c, costs.context);
    if (memory.empty()) out.push_back(first);
    for (std::size_t i = 0; i < memory.size(); ++i) {
      const auto& d = memory[i];
      Row r = i == 0 ? first : Row{};
      r.device = d.device + (d.gpu ? "" : " (host)");
      r.model = fixed(d.model_mib, 1);
      r.kv = fixed(d.kv_mib, 1);
      r.compute = fixed(d.compute_mib, 1);
      r.total = fixed(total(d), 1);
      out.push_back(std::move(r));
    }
  }
  return out;
}

std::string method(const CostTable& costs) {
  return "Path: how the pair's attention runs in this build, from the server's log — vec (a FlashAttention "
         "vector kernel is compiled for the pair), converted (none is: K and V are converted to f16 at every "
         "decode step, the server warns once), cpu (a CPU build, or the KV cache in host memory), fallback? (a "
         "GPU build whose graph has more splits than the reference cell's and no warning: the attention may "
         "run on the CPU), unknown. Memory per device in MiB from the server's log: model and compute buffers "
         "as allocated, KV at " + std::to_string(costs.context) + " tokens; (host) marks host memory.";
}

/// The cells whose path costs speed, with why and what to do.
std::vector<std::string> slow_notes(const RunData& data, const CostTable& costs) {
  std::vector<std::string> out;
  for (const auto& c : costs.cells) {
    const CellDef& cell = data.cells()[c.cell];
    if (slow_path(cell.path)) out.push_back(cell.group() + " " + cell.types() + ": " + cell.path + " — " + cell.path_reason);
  }
  return out;
}

bool recorded(const RunData& data, const CostTable& costs) {
  return std::any_of(costs.cells.begin(), costs.cells.end(), [&](const CellCost& c) {
    const CellDef& cell = data.cells()[c.cell];
    return !cell.path.empty() || !cell.memory.empty();
  });
}

}  // namespace

std::vector<DeviceBuffers> memory_at(const CellDef& cell, const CellCost& cost, int context) {
  std::vector<DeviceBuffers> out = cell.memory;
  if (cost.n_ctx <= 0 || context <= 0) return out;
  const double scale = static_cast<double>(context) / cost.n_ctx;
  for (auto& d : out) d.kv_mib *= scale;
  return out;
}

MemoryNeed memory_need(const std::vector<DeviceBuffers>& memory) {
  MemoryNeed need{std::numeric_limits<double>::quiet_NaN(), "", true};
  const bool gpu = std::any_of(memory.begin(), memory.end(), [](const auto& d) { return d.gpu; });
  if (gpu) {
    for (const auto& d : memory) {
      if (d.gpu && !(total(d) <= need.mib)) {
        need.mib = total(d);
        need.where = d.device;
      }
    }
    return need;
  }
  if (memory.empty()) return need;
  need.per_device = false;
  need.where = "all buffers (no GPU in this run)";
  need.mib = 0.0;
  for (const auto& d : memory) need.mib += total(d);
  return need;
}

std::string memory_text(const MemoryNeed& need, const std::vector<DeviceBuffers>& memory) {
  if (!std::isfinite(need.mib)) return "";
  double model = 0, kv = 0, compute = 0;
  for (const auto& d : memory) {
    if (need.per_device && d.device != need.where) continue;
    model += std::isfinite(d.model_mib) ? d.model_mib : 0.0;
    kv += std::isfinite(d.kv_mib) ? d.kv_mib : 0.0;
    compute += std::isfinite(d.compute_mib) ? d.compute_mib : 0.0;
  }
  return need.where + " " + fixed(need.mib, 1) + " MiB (model " + fixed(model, 1) + " + KV " + fixed(kv, 1) +
         " + compute " + fixed(compute, 1) + ")";
}

bool slow_path(const std::string& path) { return path == "converted" || path == "fallback?"; }

void path_memory_section(Document& doc, const RunData& data, const CostTable& costs) {
  if (!recorded(data, costs)) return;
  doc.heading(3, "Attention path and memory").paragraph(method(costs));
  Table t;
  t.header = {"cell", "path", "device", "model MiB", "KV MiB @ " + std::to_string(costs.context), "compute MiB",
              "total MiB"};
  t.numeric = {false, false, false, true, true, true, true};
  for (const auto& r : rows(data, costs)) t.rows.push_back({r.cell, r.path, r.device, r.model, r.kv, r.compute, r.total});
  doc.table(std::move(t));
  std::vector<Text> notes;
  for (const auto& n : slow_notes(data, costs)) notes.push_back({plain(n)});
  doc.list(std::move(notes));
}

void add_path_memory_json(const RunData& data, const CostTable& costs, const CellCost& cost,
                          nlohmann::ordered_json& cell) {
  using ojson = nlohmann::ordered_json;
  const CellDef& def = data.cells()[cost.cell];
  if (def.path.empty() && def.memory.empty()) return;  // a run written before paths were recorded
  cell["path"] = def.path.empty() ? ojson(nullptr) : ojson(def.path);
  cell["path_reason"] = def.path_reason;
  ojson memory = ojson::array();
  for (const auto& d : memory_at(def, cost, costs.context)) {
    memory.push_back({{"device", d.device}, {"gpu", d.gpu}, {"model_mib", d.model_mib}, {"kv_mib", d.kv_mib},
                      {"compute_mib", d.compute_mib}, {"total_mib", total(d)}});
  }
  cell["memory"] = std::move(memory);
}

}  // namespace kvsweep::report

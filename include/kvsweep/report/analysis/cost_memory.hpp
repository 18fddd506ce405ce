#pragma once
/// What a cell needs in memory, per device, and how its attention runs: the server's model, KV and
/// compute buffers (KV at a chosen context) beside the attention path, for the Cost section and
/// `recommend --vram`.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/report/analysis/cost.hpp"
#include "kvsweep/report/document/document.hpp"
#include "kvsweep/report/input/run_data.hpp"

namespace kvsweep::report {

/// The cell's buffers per device with KV scaled from the cell's -c to `context` tokens (the server's
/// bytes per token); model and compute as allocated.
std::vector<DeviceBuffers> memory_at(const CellDef& cell, const CellCost& cost, int context);

/// What must fit: the largest GPU device's model + KV + compute (`per_device`), or, in a run without
/// GPU buffers, the sum over all buffers (host memory: an estimate of what a GPU would need).
struct MemoryNeed {
  double mib = 0.0;      // NaN when the manifest recorded no buffers
  std::string where;     // "CUDA0", or "all buffers (no GPU in this run)"
  bool per_device = true;
};
MemoryNeed memory_need(const std::vector<DeviceBuffers>& memory);

/// "CUDA0 30.4 MiB (model 17.9 + KV 4.0 + compute 8.5)"; "" without buffers.
std::string memory_text(const MemoryNeed& need, const std::vector<DeviceBuffers>& memory);

/// Whether the path costs speed a user can remove: converted or fallback?.
bool slow_path(const std::string& path);

/// Adds the "Attention path and memory" block of the Cost section; nothing when the run recorded neither.
void path_memory_section(Document& doc, const RunData& data, const CostTable& costs);
/// Adds "path", "path_reason" and "memory" (at costs.context) to a cell of cost_json, when the manifest
/// recorded them.
void add_path_memory_json(const RunData& data, const CostTable& costs, const CellCost& cost,
                          nlohmann::ordered_json& cell);

}  // namespace kvsweep::report

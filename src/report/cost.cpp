#include "kvsweep/report/cost.hpp"

#include <cmath>
#include <limits>
#include <map>

#include "kvsweep/report/cost_memory.hpp"
#include "kvsweep/report/format.hpp"

namespace kvsweep::report {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kMiB = 1024.0 * 1024.0;

double num(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return kNaN;
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : kNaN;
}

/// The manifest's entry for a cell (matched by model and types: RunData may add cells records name).
nlohmann::json manifest_cell(const RunData& data, const CellDef& cell) {
  const auto& m = data.manifest();
  if (!m.contains("cells") || !m["cells"].is_array()) return nlohmann::json::object();
  for (const auto& c : m["cells"]) {
    if (RunData::group_of(c) == cell.group() && c.value("type_k", "") == cell.type_k &&
        c.value("type_v", "") == cell.type_v) {
      return c;
    }
  }
  return nlohmann::json::object();
}

Rate rate_of(const std::vector<double>& per_item, const SummaryOptions& options) {
  Rate r;
  r.n = per_item.size();
  r.median = stats::median(per_item);
  r.ci = stats::bootstrap_ci(per_item, {stats::Statistic::median, options.bootstrap_iterations, options.confidence,
                                        options.bootstrap_seed});
  return r;
}

double ratio(double x, double reference) { return reference > 0.0 ? x / reference : kNaN; }

std::string bytes(double v) { return std::isfinite(v) ? fixed(v, v >= 100 ? 0 : 1) : "—"; }

std::string rate_text(const Rate& r) {
  if (r.n == 0) return "—";
  return fixed(r.median, 1) + " [" + fixed(r.ci.lower, 1) + ", " + fixed(r.ci.upper, 1) + "]";
}

std::string times(double x) { return std::isfinite(x) ? fixed(x, 2) + "×" : "—"; }

struct Row {
  std::string cell, k, v, kv, mib, prompt, prompt_x, decode, decode_x;
};

std::vector<Row> rows(const RunData& data, const CostTable& costs) {
  std::vector<Row> out;
  for (const auto& c : costs.cells) {
    const CellDef& cell = data.cells()[c.cell];
    out.push_back({cell.group() + " " + cell.type_k + "/" + cell.type_v + (cell.is_reference ? " (ref)" : ""),
                   bytes(c.k_bytes_per_token), bytes(c.v_bytes_per_token), bytes(c.kv_bytes_per_token),
                   std::isfinite(c.kv_mib_at_context) ? fixed(c.kv_mib_at_context, 1) : "—", rate_text(c.prompt),
                   times(c.prompt_x), rate_text(c.decode), times(c.decode_x)});
  }
  return out;
}

std::string method(const CostTable& costs) {
  return "KV bytes per token are the server's allocated K and V buffers (MiB from its log) ÷ the cell's -c; "
         "memory is that × " + std::to_string(costs.context) +
         " tokens. Speeds are tokens/s per item (prompt: only the tokens the server evaluated, prompt_n, not "
         "those served from the prefix cache; decode: predicted_n ÷ predicted_ms), the median over items "
         "[95% bootstrap CI of the median], and × is the median relative to the reference cell's.";
}

}  // namespace

const CellCost* CostTable::find(std::size_t cell) const {
  for (const auto& c : cells) {
    if (c.cell == cell) return &c;
  }
  return nullptr;
}

CostTable cell_costs(const RunData& data, std::optional<int> context, const SummaryOptions& options) {
  CostTable table;
  const int run_ctx = data.manifest().value("n_ctx", 0);
  table.context = context.value_or(run_ctx);

  // Per-item rates from the records that count.
  std::map<std::size_t, std::vector<double>> prompt, decode;
  for (std::size_t i = 0; i < data.records().size(); ++i) {
    if (!data.counts(i)) continue;
    const auto& r = data.records()[i];
    if (r.value("status", "") != "ok" || !r.contains("timings") || !r["timings"].is_object()) continue;
    const auto& c = r["cell"];
    auto cell = data.find_cell(RunData::group_of(c), c.value("type_k", ""), c.value("type_v", ""));
    if (!cell) continue;
    const auto& t = r["timings"];
    const double pn = num(t, "prompt_n"), pms = num(t, "prompt_ms");
    const double dn = num(t, "predicted_n"), dms = num(t, "predicted_ms");
    if (pn > 0 && pms > 0) prompt[*cell].push_back(pn / pms * 1000.0);
    if (dn > 0 && dms > 0) decode[*cell].push_back(dn / dms * 1000.0);
  }

  for (std::size_t index : data.grid_order()) {
    const CellDef& cell = data.cells()[index];
    const nlohmann::json entry = manifest_cell(data, cell);
    const nlohmann::json effective = entry.value("effective", nlohmann::json::object());
    CellCost c;
    c.cell = index;
    c.n_ctx = entry.value("n_ctx", run_ctx);
    const double per_token = c.n_ctx > 0 ? kMiB / c.n_ctx : kNaN;
    const double k = num(effective, "k_mib"), v = num(effective, "v_mib");
    c.k_bytes_per_token = k * per_token;
    c.v_bytes_per_token = v * per_token;
    double kv = num(effective, "kv_mib");
    if (!std::isfinite(kv)) kv = k + v;
    c.kv_bytes_per_token = kv * per_token;
    c.kv_mib_at_context = c.kv_bytes_per_token * table.context / kMiB;
    c.prompt = rate_of(prompt[index], options);
    c.decode = rate_of(decode[index], options);
    table.cells.push_back(c);
  }
  for (auto& c : table.cells) {
    const auto ref = data.reference(data.cells()[c.cell].group());
    const CellCost* r = ref ? table.find(*ref) : nullptr;
    c.prompt_x = r ? ratio(c.prompt.median, r->prompt.median) : kNaN;
    c.decode_x = r ? ratio(c.decode.median, r->decode.median) : kNaN;
  }
  return table;
}

std::string cost_markdown(const RunData& data, const CostTable& costs) {
  std::string out = "## Cost\n\n" + method(costs) + "\n\n";
  out += "| cell | K B/token | V B/token | KV B/token | KV MiB @ " + std::to_string(costs.context) +
         " | prompt tok/s | × | decode tok/s | × |\n";
  out += "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& r : rows(data, costs)) {
    out += "| " + md_cell(r.cell) + " | " + r.k + " | " + r.v + " | " + r.kv + " | " + r.mib + " | " + r.prompt +
           " | " + r.prompt_x + " | " + r.decode + " | " + r.decode_x + " |\n";
  }
  return out + path_memory_markdown(data, costs);
}

std::string cost_html(const RunData& data, const CostTable& costs) {
  std::string out = "<section id=\"cost\">\n<h2>Cost</h2>\n<p>" + xml_escape(method(costs)) + "</p>\n";
  out += "<table>\n<thead><tr><th>cell</th><th>K B/token</th><th>V B/token</th><th>KV B/token</th><th>KV MiB @ " +
         std::to_string(costs.context) +
         "</th><th>prompt tok/s</th><th>×</th><th>decode tok/s</th><th>×</th></tr></thead>\n<tbody>\n";
  for (const auto& r : rows(data, costs)) {
    out += "<tr><td>" + xml_escape(r.cell) + "</td><td>" + r.k + "</td><td>" + r.v + "</td><td>" + r.kv + "</td><td>" +
           r.mib + "</td><td>" + r.prompt + "</td><td>" + r.prompt_x + "</td><td>" + r.decode + "</td><td>" +
           r.decode_x + "</td></tr>\n";
  }
  return out + "</tbody>\n</table>\n" + path_memory_html(data, costs) + "</section>\n";
}

nlohmann::ordered_json cost_json(const RunData& data, const CostTable& costs) {
  using ojson = nlohmann::ordered_json;
  const auto rate = [](const Rate& r) {
    return ojson{{"n", r.n}, {"median", r.median}, {"ci95", ojson::array({r.ci.lower, r.ci.upper})}};
  };
  ojson cells = ojson::array();
  for (const auto& c : costs.cells) {
    cells.push_back({{"id", data.cells()[c.cell].id},
                     {"n_ctx", c.n_ctx},
                     {"k_bytes_per_token", c.k_bytes_per_token},
                     {"v_bytes_per_token", c.v_bytes_per_token},
                     {"kv_bytes_per_token", c.kv_bytes_per_token},
                     {"kv_mib_at_context", c.kv_mib_at_context},
                     {"prompt_tps", rate(c.prompt)},
                     {"prompt_x", c.prompt_x},
                     {"decode_tps", rate(c.decode)},
                     {"decode_x", c.decode_x}});
    add_path_memory_json(data, costs, c, cells.back());
  }
  return ojson{{"context", costs.context}, {"cells", std::move(cells)}};
}

}  // namespace kvsweep::report

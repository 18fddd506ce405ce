#include "kvsweep/report/analysis/cost.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "kvsweep/probe/speed/speed.hpp"
#include "kvsweep/report/analysis/cost_memory.hpp"
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

/// The manifest's entry for a cell (matched by model and types: RunData may add cells records name);
/// nullptr when it has none.
const sweep::ManifestCell* manifest_cell(const RunData& data, const CellDef& cell) {
  for (const auto& c : data.manifest().cell_list())
    if (c.group() == cell.group() && c.type_k == cell.type_k && c.type_v == cell.type_v) return &c;
  return nullptr;
}

/// llama-bench's speeds in one ok record of the speed probe (its item's spec says depth and sizes).
std::optional<BenchSpeed> bench_speed(const probe::Record& record) {
  const std::optional<probe::SpeedSpec> spec = probe::SpeedSpec::from_json(record.spec);
  const nlohmann::json& metrics = record.metrics;
  if (!spec) return std::nullopt;
  BenchSpeed b;
  b.depth = spec->depth;
  b.pp = spec->pp;
  b.tg = spec->tg;
  b.pp_tok_s = num(metrics, "pp_tok_s");
  b.pp_sd = num(metrics, "pp_tok_s_sd");
  b.tg_tok_s = num(metrics, "tg_tok_s");
  b.tg_sd = num(metrics, "tg_tok_s_sd");
  return b;
}

/// One item's share of a rate: its tokens and ms, the requests they came from, and the depth they started at.
struct Sample {
  double tokens = 0, ms = 0, requests = 1, depth = 0;
};

/// The items of one cell that measure a rate (and how many ok items with tokens were too small).
struct Samples {
  std::vector<Sample> counted;
  std::size_t skipped = 0;
};

Rate rate_of(const Samples& samples, const SummaryOptions& options) {
  Rate r;
  r.skipped = samples.skipped;
  r.n = samples.counted.size();
  std::vector<double> tokens, ms;
  double weighted_depth = 0.0;
  for (const auto& s : samples.counted) {
    r.tokens += s.tokens;
    r.ms += s.ms;
    r.requests += s.requests;
    weighted_depth += s.depth * s.tokens;
    tokens.push_back(s.tokens);
    ms.push_back(s.ms);
  }
  r.tok_s = r.ms > 0 ? r.tokens / r.ms * 1000.0 : kNaN;
  r.depth = r.tokens > 0 ? weighted_depth / r.tokens : kNaN;
  if (r.n >= kMinItemsForBound) {
    // tokens per ms, then × 1000: the same rounding as tok_s, so equal items give a CI equal to it.
    const auto per_ms = stats::bootstrap_ratio_ci(tokens, ms, {stats::Statistic::mean, options.bootstrap_iterations,
                                                              options.confidence, options.bootstrap_seed});
    r.ci = stats::ConfidenceInterval{per_ms.lower * 1000.0, per_ms.upper * 1000.0};
  }
  return r;
}

double ratio(double x, double reference) { return reference > 0.0 ? x / reference : kNaN; }


std::string rate_text(const Rate& r) {
  if (r.n == 0) return "—";
  return fixed(r.tok_s, 1) + (r.ci ? " [" + fixed(r.ci->lower, 1) + ", " + fixed(r.ci->upper, 1) + "]" : "");
}

/// "1 req × 10240 @ d0": how much the rate rests on, and where in the context it was measured.
std::string basis_text(const Rate& r) {
  if (r.n == 0) return r.skipped > 0 ? "none large enough" : "—";
  return fixed(r.requests, 0) + " req × " + fixed(r.tokens / r.requests, 0) + " @ d" + fixed(r.depth, 0);
}

std::string bench_text(double tok_s, double sd) {
  return std::isfinite(tok_s) ? fixed(tok_s, 1) + " ± " + fixed(sd, 1) : "—";
}

/// The same llama-bench test: depth and sizes (two speed probes may measure pp and tg apart).
bool same_test(const BenchSpeed& a, const BenchSpeed& b) { return a.depth == b.depth && a.pp == b.pp && a.tg == b.tg; }

const BenchSpeed* bench_at(const CellCost& c, const BenchSpeed& test) {
  for (const auto& b : c.bench) {
    if (same_test(b, test)) return &b;
  }
  return nullptr;
}

/// The depths (and test sizes) any cell's speed probe ran at, in order: the table's llama-bench columns.
std::vector<BenchSpeed> bench_columns(const CostTable& costs) {
  std::vector<BenchSpeed> out;
  for (const auto& c : costs.cells) {
    for (const auto& b : c.bench) {
      const bool known = std::any_of(out.begin(), out.end(), [&](const BenchSpeed& o) { return same_test(o, b); });
      if (!known) out.push_back(b);
    }
  }
  std::sort(out.begin(), out.end(), [](const BenchSpeed& a, const BenchSpeed& b) { return a.depth < b.depth; });
  return out;
}

/// The column headers of the llama-bench speeds: "pp512 @ d0", "tg128 @ d0", … as llama-bench names its tests.
std::vector<std::string> bench_headers(const std::vector<BenchSpeed>& columns) {
  std::vector<std::string> out;
  for (const auto& b : columns) {
    const std::string at = b.depth > 0 ? " @ d" + std::to_string(b.depth) : "";
    if (b.pp > 0) out.push_back("pp" + std::to_string(b.pp) + at + " tok/s");
    if (b.tg > 0) out.push_back("tg" + std::to_string(b.tg) + at + " tok/s");
  }
  return out;
}

std::string times(double x) { return std::isfinite(x) ? fixed(x, 2) + "×" : "—"; }

struct Row {
  std::string cell, k, v, kv, mib, prompt, prompt_basis, prompt_x, decode, decode_basis, decode_x;
  std::vector<std::string> bench;  // one per bench_headers column
};

std::vector<Row> rows(const RunData& data, const CostTable& costs) {
  const std::vector<BenchSpeed> columns = bench_columns(costs);
  std::vector<Row> out;
  for (const auto& c : costs.cells) {
    const CellDef& cell = data.cells()[c.cell];
    Row row{cell.group() + " " + cell.types() + (cell.is_reference ? " (ref)" : ""),
            bytes_text(c.k_bytes_per_token), bytes_text(c.v_bytes_per_token), bytes_text(c.kv_bytes_per_token),
            std::isfinite(c.kv_mib_at_context) ? fixed(c.kv_mib_at_context, 1) : "—", rate_text(c.prompt),
            basis_text(c.prompt), times(c.prompt_x), rate_text(c.decode), basis_text(c.decode), times(c.decode_x), {}};
    for (const auto& col : columns) {
      const BenchSpeed* b = bench_at(c, col);
      if (col.pp > 0) row.bench.push_back(b ? bench_text(b->pp_tok_s, b->pp_sd) : "—");
      if (col.tg > 0) row.bench.push_back(b ? bench_text(b->tg_tok_s, b->tg_sd) : "—");
    }
    out.push_back(std::move(row));
  }
  return out;
}

std::string method(const CostTable& costs) {
  std::string text =
      "KV bytes per token are the server's allocated K and V buffers (MiB from its log) ÷ the cell's -c; "
      "memory is that × " + std::to_string(costs.context) +
      " tokens. Prefill and decode are token-weighted as llama-bench measures them: Σ tokens ÷ Σ ms over the "
      "items whose requests evaluated at least " + fixed(kMinPrefillTokens, 0) +
      " prompt tokens each (prompt_n: the tokens the server evaluated, not those served from the prefix cache) or "
      "generated at least " + fixed(kMinDecodeTokens, 0) +
      " tokens each; \"req × tokens @ dN\" says how many requests of how many tokens that rests on and the mean "
      "depth (tokens already in the context) they started at. [95% bootstrap CI over items] from " +
      std::to_string(kMinItemsForBound) + " items on; — where no item was large enough. × is relative to the "
      "reference cell's.";
  if (!bench_columns(costs).empty())
    text += " ppN/tgN @ dD are llama-bench's (the speed probe, run with the cell's K/V types and server settings "
            "while its server was stopped): mean ± sd over its repetitions.";
  return text;
}

}  // namespace

std::string speed_source_note(const CellCost& c) {
  const bool pp = c.pp_source == CellCost::SpeedSource::server, tg = c.tg_source == CellCost::SpeedSource::server;
  if (!c.speed_probe || !(pp || tg)) return "";
  if (c.bench_missing) return "from server timings, the speed probe measured nothing";
  return std::string(pp && tg ? "pp and tg" : pp ? "pp" : "tg") + " from server timings, the speed probe did not measure " +
         (pp && tg ? "them" : "it");
}

const CellCost* CostTable::find(std::size_t cell) const {
  for (const auto& c : cells) {
    if (c.cell == cell) return &c;
  }
  return nullptr;
}

namespace {

/// "from 2 items" when a counted rate of `c` or `ref` rests on fewer than kMinItemsForRatio items.
std::string few_items(const CellCost& c, const CellCost& ref) {
  std::size_t fewest = kMinItemsForRatio;
  for (const Rate* r : {&c.prompt, &c.decode, &ref.prompt, &ref.decode})
    if (r->n > 0) fewest = std::min(fewest, r->n);
  if (fewest >= kMinItemsForRatio) return "";
  return "from " + std::to_string(fewest) + (fewest == 1 ? " item" : " items");
}

/// "host loaded (load 6.2 on 2 cores)" when the cell or its reference ended with the load above the cores.
std::string loaded(const RunData& data, const CellCost& c, const CellCost& ref) {
  const double cores = num(data.manifest().host, "cores");
  if (!(cores > 0)) return "";
  double worst = -1;
  for (const CellCost* side : {&c, &ref}) {
    const sweep::ManifestCell* entry = manifest_cell(data, data.cells()[side->cell]);
    const double load = entry ? entry->load_avg.value_or(kNaN) : kNaN;
    if (std::isfinite(load)) worst = std::max(worst, load);
  }
  if (!(worst > cores)) return "";
  return "host loaded (load " + fixed(worst, 1) + " on " + fixed(cores, 0) + " cores)";
}

std::string speed_caveat(const RunData& data, const CellCost& c, const CellCost& ref) {
  if (&c == &ref || !(std::isfinite(c.prompt_x) || std::isfinite(c.decode_x))) return "";
  std::string out = few_items(c, ref);
  const std::string load = loaded(data, c, ref);
  if (!load.empty()) out += (out.empty() ? "" : "; ") + load;
  return out;
}

}  // namespace

CostTable cell_costs(const RunData& data, std::optional<int> context, const SummaryOptions& options) {
  CostTable table;
  const int run_ctx = data.manifest().n_ctx.value_or(0);
  table.context = context.value_or(run_ctx);

  // The items that measure a rate, from the records that count; the speed probe's records.
  std::map<std::size_t, Samples> prompt, decode;
  std::map<std::size_t, std::vector<BenchSpeed>> bench;
  for (std::size_t i = 0; i < data.records().size(); ++i) {
    if (!data.counts(i)) continue;
    const auto& r = data.records()[i];
    if (!r.ok()) continue;
    auto cell = data.find_cell(r.cell.group(), r.cell.type_k, r.cell.type_v);
    if (!cell) continue;
    if (r.kind == "speed") {
      if (auto b = bench_speed(r)) bench[*cell].push_back(*b);
      continue;
    }
    const auto& t = r.timings;
    // Records written before `requests` existed hold one request's timings or a sum: read them as one.
    const double requests = std::max(1.0, std::isfinite(num(t, "requests")) ? num(t, "requests") : 1.0);
    const double pn = num(t, "prompt_n"), pms = num(t, "prompt_ms"), cached = num(t, "cache_n");
    const double dn = num(t, "predicted_n"), dms = num(t, "predicted_ms");
    const double start = std::isfinite(cached) ? cached / requests : 0.0;
    if (pn > 0 && pms > 0) {
      if (pn / requests >= kMinPrefillTokens) prompt[*cell].counted.push_back({pn, pms, requests, start});
      else ++prompt[*cell].skipped;
    }
    if (dn > 0 && dms > 0) {
      if (dn / requests >= kMinDecodeTokens) decode[*cell].counted.push_back({dn, dms, requests, start + pn / requests});
      else ++decode[*cell].skipped;
    }
  }

  for (std::size_t index : data.grid_order()) {
    const CellDef& cell = data.cells()[index];
    const sweep::ManifestCell* entry = manifest_cell(data, cell);
    const sweep::CellEffective effective = entry ? entry->effective.value_or(sweep::CellEffective{}) : sweep::CellEffective{};
    CellCost c;
    c.cell = index;
    // A cell's own context, where a manifest gave one (kvsweep writes the run's n_ctx only).
    c.n_ctx = entry ? entry->extra.value("n_ctx", run_ctx) : run_ctx;
    const double per_token = c.n_ctx > 0 ? kMiB / c.n_ctx : kNaN;
    const double k = effective.k_mib.value_or(kNaN), v = effective.v_mib.value_or(kNaN);
    c.k_bytes_per_token = k * per_token;
    c.v_bytes_per_token = v * per_token;
    double kv = effective.kv_mib.value_or(kNaN);
    if (!std::isfinite(kv)) kv = k + v;
    c.kv_bytes_per_token = kv * per_token;
    c.kv_mib_at_context = c.kv_bytes_per_token * table.context / kMiB;
    c.prompt = rate_of(prompt[index], options);
    c.decode = rate_of(decode[index], options);
    c.bench = bench[index];
    std::sort(c.bench.begin(), c.bench.end(), [](const BenchSpeed& a, const BenchSpeed& b) { return a.depth < b.depth; });
    table.cells.push_back(c);
  }
  const bool speed_probe =
      std::any_of(data.probes().begin(), data.probes().end(), [](const ProbeDef& p) { return p.kind == "speed"; });
  for (auto& c : table.cells) {
    const auto ref = data.reference(data.cells()[c.cell].group());
    const CellCost* r = ref ? table.find(*ref) : nullptr;
    c.prompt_x = r ? ratio(c.prompt.tok_s, r->prompt.tok_s) : kNaN;
    c.decode_x = r ? ratio(c.decode.tok_s, r->decode.tok_s) : kNaN;
    double pp_worst = kNaN, tg_worst = kNaN;
    for (auto& b : c.bench) {
      const BenchSpeed* rb = r ? bench_at(*r, b) : nullptr;
      b.pp_x = rb ? ratio(b.pp_tok_s, rb->pp_tok_s) : kNaN;
      b.tg_x = rb ? ratio(b.tg_tok_s, rb->tg_tok_s) : kNaN;
      if (std::isfinite(b.pp_x)) pp_worst = std::isfinite(pp_worst) ? std::min(pp_worst, b.pp_x) : b.pp_x;
      if (std::isfinite(b.tg_x)) tg_worst = std::isfinite(tg_worst) ? std::min(tg_worst, b.tg_x) : b.tg_x;
    }
    c.pp_x_worst = std::isfinite(pp_worst) ? pp_worst : c.prompt_x;
    c.tg_x_worst = std::isfinite(tg_worst) ? tg_worst : c.decode_x;
    const auto source = [](double bench_x, double server_x) {
      return std::isfinite(bench_x)    ? CellCost::SpeedSource::bench
             : std::isfinite(server_x) ? CellCost::SpeedSource::server
                                       : CellCost::SpeedSource::none;
    };
    c.pp_source = source(pp_worst, c.prompt_x);
    c.tg_source = source(tg_worst, c.decode_x);
    c.speed_probe = speed_probe;
    c.bench_missing = speed_probe && (c.bench.empty() || r == nullptr || r->bench.empty());
    if (r) c.speed_caveat = speed_caveat(data, c, *r);
  }
  return table;
}

void cost_section(Document& doc, const RunData& data, const CostTable& costs) {
  doc.heading(2, "Cost").paragraph(method(costs));
  Table t;
  t.header = {"cell",          "K B/token",  "V B/token", "KV B/token",  "KV MiB @ " + std::to_string(costs.context),
              "prefill tok/s", "prefill on", "×",         "decode tok/s", "decode on",
              "×"};
  t.numeric = {false, true, true, true, true, true, false, true, true, false, true};
  for (const auto& h : bench_headers(bench_columns(costs))) {
    t.header.push_back(h);
    t.numeric.push_back(true);
  }
  for (auto& r : rows(data, costs)) {
    std::vector<std::string> row{r.cell,   r.k,      r.v,          r.kv,       r.mib,         r.prompt,
                                 r.prompt_basis, r.prompt_x, r.decode, r.decode_basis, r.decode_x};
    row.insert(row.end(), r.bench.begin(), r.bench.end());
    t.rows.push_back(std::move(row));
  }
  doc.table(std::move(t));
  std::string weak;
  for (const auto& c : costs.cells)
    if (!c.speed_caveat.empty()) weak += (weak.empty() ? "" : "; ") + data.cells()[c.cell].group() + " " + data.cells()[c.cell].types() + ": " + c.speed_caveat;
  if (!weak.empty())
    doc.paragraph("Prefill and decode × to take lightly (fewer than " + std::to_string(kMinItemsForRatio) +
                  " items, or a host busier than its cores, move them by more than a K/V type does): " + weak + ".");
  path_memory_section(doc, data, costs);
}

std::string cost_markdown(const RunData& data, const CostTable& costs) {
  Document doc;
  cost_section(doc, data, costs);
  return render_markdown(doc);
}

nlohmann::ordered_json cost_json(const RunData& data, const CostTable& costs) {
  using ojson = nlohmann::ordered_json;
  const auto rate = [](const Rate& r) {
    return ojson{{"n", r.n},
                 {"requests", r.requests},
                 {"tokens", r.tokens},
                 {"ms", r.ms},
                 {"tok_s", r.tok_s},
                 {"ci95", r.ci ? ojson::array({r.ci->lower, r.ci->upper}) : ojson(nullptr)},
                 {"depth", r.depth},
                 {"skipped", r.skipped}};
  };
  const auto bench = [](const std::vector<BenchSpeed>& speeds) {
    ojson out = ojson::array();
    for (const auto& b : speeds) {
      out.push_back({{"depth", b.depth}, {"pp", b.pp}, {"tg", b.tg}, {"pp_tok_s", b.pp_tok_s}, {"pp_sd", b.pp_sd},
                     {"tg_tok_s", b.tg_tok_s}, {"tg_sd", b.tg_sd}, {"pp_x", b.pp_x}, {"tg_x", b.tg_x}});
    }
    return out;
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
                     {"decode_x", c.decode_x},
                     {"bench", bench(c.bench)}});
    if (!c.speed_caveat.empty()) cells.back()["speed_caveat"] = c.speed_caveat;
    add_path_memory_json(data, costs, c, cells.back());
  }
  return ojson{{"context", costs.context}, {"cells", std::move(cells)}};
}

}  // namespace kvsweep::report

/// The recommend command's writers: Markdown for people, JSON for tools.

#include "kvsweep/report/analysis/recommend.hpp"

#include <cmath>

#include "kvsweep/report/analysis/cost.hpp"
#include "kvsweep/report/analysis/cost_memory.hpp"
#include "kvsweep/report/format.hpp"
#include "kvsweep/report/analysis/recommend_headline.hpp"
#include "kvsweep/report/input/cache_setting.hpp"
#include "kvsweep/stats/precision.hpp"

namespace kvsweep::report {

namespace {

std::string verdict_word(const stats::NonInferiority& r) {
  std::string w(stats::to_string(r.verdict));
  if (r.verdict == stats::Decision::unknown) {
    if (r.items_needed) {
      w += " (needs ~" + std::to_string(*r.items_needed) + " items)";
    } else {
      w += r.n < 2 ? " (needs ≥ 2 items: one has no spread)" : " (more items would not tell)";
    }
  }
  return w;
}


/// " Path: vec. Memory: CUDA0 30.4 MiB (…), fits --vram 24 GiB per GPU device." — a converted or
/// fallback? path is never recommended silently: the sentence carries its warning and remedy.
Text path_memory_sentence(const CellDef& cell, const CellCost& cost, const Recommendation& rec) {
  Text out;
  if (!cell.path.empty()) {
    out.push_back(plain(" Path: " + cell.path));
    if (slow_path(cell.path)) {
      out.push_back(plain(" — "));
      out.push_back(strong("warning"));
      out.push_back(plain(": " + cell.path_reason));
    }
    out.push_back(plain("."));
  }
  const auto memory = memory_at(cell, cost, rec.costs.context);
  const MemoryNeed need = memory_need(memory);
  if (std::isfinite(need.mib)) {
    std::string m = " Memory at " + std::to_string(rec.costs.context) + " tokens: " + memory_text(need, memory);
    if (rec.vram_gib)
      m += ", fits --vram " + shortest(*rec.vram_gib) + " GiB" +
           (need.per_device ? " on every GPU device" : " (host buffers: no GPU in this run, an estimate)");
    out.push_back(plain(m + "."));
  }
  return out;
}

nlohmann::ordered_json over_vram_json(const RunData& data, const ModelRecommendation& mr) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& [cell, need] : mr.over_vram) out.push_back({{"id", data.cells()[cell].id}, {"needs", need}});
  return out;
}

std::string tok_s(double rate, double x) {
  return fixed(rate, 1) + " tok/s" + (std::isfinite(x) ? " (" + fixed(x, 2) + "×)" : "");
}

/// The recommended cell's speed: llama-bench's pp/tg at each depth when the run has them, and the
/// prefill and decode the server reported, each with its ratio to the reference.
std::string speed_sentence(const CellCost& cost) {
  std::string out;
  for (const auto& b : cost.bench) {
    const std::string at = " @ d" + std::to_string(b.depth);
    if (std::isfinite(b.pp_tok_s)) out += "pp" + std::to_string(b.pp) + at + " " + tok_s(b.pp_tok_s, b.pp_x) + ", ";
    if (std::isfinite(b.tg_tok_s)) out += "tg" + std::to_string(b.tg) + at + " " + tok_s(b.tg_tok_s, b.tg_x) + ", ";
  }
  out += "prefill " +
         (cost.prompt.n ? tok_s(cost.prompt.tok_s, cost.prompt_x)
                        : "— (no request of " + fixed(kMinPrefillTokens, 0) + "+ prompt tokens)") +
         ", decode " +
         (cost.decode.n ? tok_s(cost.decode.tok_s, cost.decode_x)
                        : "— (no answer of " + fixed(kMinDecodeTokens, 0) + "+ tokens)");
  if (!cost.speed_caveat.empty()) out += " (" + cost.speed_caveat + ": ratios to take lightly)";
  if (const std::string source = speed_source_note(cost); !source.empty()) out += " (" + source + ")";
  return out;
}

std::string speed_x(const CellCost* cost) {
  if (cost == nullptr) return "—";
  const auto x = [](double v) { return std::isfinite(v) ? fixed(v, 2) + "×" : "—"; };
  // pp/tg from llama-bench stand on their repetitions; the server's prefill/decode may be weak, and
  // where they stand in for the speed probe's, they say so.
  const bool from_server =
      cost->pp_source == CellCost::SpeedSource::server || cost->tg_source == CellCost::SpeedSource::server;
  std::string notes = from_server ? cost->speed_caveat : "";
  if (const std::string source = speed_source_note(*cost); !source.empty())
    notes += (notes.empty() ? "" : "; ") + source;
  return x(cost->pp_x_worst) + " / " + x(cost->tg_x_worst) + (notes.empty() ? "" : " (" + notes + ")");
}

std::string method_text(const Recommendation& rec) {
  const int confidence = static_cast<int>(std::lround((1.0 - rec.alpha) * 100));
  std::string out =
      "A cell is non-inferior on a metric when the one-sided " + std::to_string(confidence) +
      "% lower bound of (cell − reference), oriented so + is better, is above −margin; inferior when the "
      "one-sided upper bound is below −margin; unknown otherwise. Bounds: Newcombe's hybrid score interval "
      "for paired 0/1 metrics (Newcombe 1998, method 10), the paired t bound for counts and continuous "
      "metrics (Student 1908). Default margins: 0.05 for 0/1 rates, 5% of a count's range (its declared "
      "range, else the reference's largest value), 0.02 for continuous metrics; --margin METRIC=V overrides. " +
      (rec.gate.empty() ? std::string("Every quality metric is gated, unless a probe's config names its own (\"gate\")"
                                      "; a derived metric (recall's passed: primary_matched ≥ pass_lines) is gated beside "
                                      "the one it summarises unless left out that way or by --gate.")
                        : "Gated (--gate): " + [&] {
                            std::string list;
                            for (const auto& g : rec.gate) list += (list.empty() ? "" : ", ") + g;
                            return list;
                          }() + "; the other metrics are shown, not gated.");
  if (rec.max_slowdown) {
    out += " --max-slowdown " + fixed(*rec.max_slowdown, 2) + ": a cell whose pp or tg (llama-bench's at its worst "
           "depth when the run has the speed probe, else the server's prefill and decode) is below " +
           fixed(*rec.max_slowdown, 2) + " × the reference's is not recommended.";
  }
  return out;
}

/// The model's answer: the recommended pair with what it costs, or the headline's verdict and why.
Text answer(const RunData& data, const Recommendation& rec, const ModelRecommendation& mr) {
  const CellDef& ref = data.cells()[*mr.reference];
  const CellCost* ref_cost = rec.costs.find(*mr.reference);
  if (mr.recommended) {
    const CellDef& c = data.cells()[*mr.recommended];
    const CellCost* cost = rec.costs.find(*mr.recommended);
    const auto* cv = &*std::find_if(mr.cells.begin(), mr.cells.end(),
                                    [&](const CellVerdict& v) { return v.cell == *mr.recommended; });
    const CacheSetting setting = cache_setting(data.manifest(), c);
    Text out{strong("Recommended: " + setting.text)};
    std::string rest = " — non-inferior to " + ref.types() + " on all " + std::to_string(cv->metrics.size()) +
                       " gated metrics. " + (setting.note.empty() ? "" : setting.note + ". ");
    if (cost) {
      rest += "KV " + bytes_text(cost->kv_bytes_per_token) + " B/token (K " + bytes_text(cost->k_bytes_per_token) + ", V " +
              bytes_text(cost->v_bytes_per_token) + "), " + fixed(cost->kv_mib_at_context, 1) + " MiB at " +
              std::to_string(rec.costs.context) + " tokens";
      if (ref_cost && ref_cost->kv_bytes_per_token > 0) {
        rest += " (" + fixed(cost->kv_bytes_per_token / ref_cost->kv_bytes_per_token, 2) + "× the reference's " +
                fixed(ref_cost->kv_mib_at_context, 1) + " MiB)";
      }
      rest += "; " + speed_sentence(*cost) + ".";
    }
    out.push_back(plain(rest));
    if (cost) {
      const Text pm = path_memory_sentence(c, *cost, rec);
      out.insert(out.end(), pm.begin(), pm.end());
    }
    return out;
  }
  const auto slow = std::count_if(mr.cells.begin(), mr.cells.end(), [](const CellVerdict& v) {
    return !v.too_slow.empty() && !v.metrics.empty() && v.missing_probes.empty() && v.inferior == 0 && v.unknown == 0;
  });
  const HeadlineWords h = explain(recommend_headline(mr), data);
  std::string rest = ": " + h.sentence;
  if (slow > 0)
    rest += " (" + std::to_string(slow) + " non-inferior cell" + (slow > 1 ? "s are" : " is") +
            " slower than --max-slowdown allows)";
  if (!mr.over_vram.empty())
    rest += " No cell that fits --vram " + shortest(*rec.vram_gib) +
            " GiB is non-inferior on every gated metric: those left out are listed below.";
  return {strong(h.verdict), plain(rest)};
}

/// One row per cell: KV, verdict counts, the worst bound, speed and whether it is on the cost frontier.
Table cell_verdict_table(const RunData& data, const Recommendation& rec, const ModelRecommendation& mr) {
  Table t;
  t.header = {"cell",           "KV B/token",           "KV MiB @ " + std::to_string(rec.costs.context),
              "non-inferior",   "inferior",             "unknown",
              "missing probes", "worst bound ÷ margin", "pp × / tg ×",
              "frontier"};
  t.numeric = {false, true, true, true, true, true, false, true, false, false};
  const auto on_frontier = [&](std::size_t cell) {
    return std::find(mr.frontier.begin(), mr.frontier.end(), cell) != mr.frontier.end() ? "yes" : "";
  };
  if (const CellCost* ref_cost = rec.costs.find(*mr.reference)) {
    t.rows.push_back({data.cells()[*mr.reference].types() + " (ref)", bytes_text(ref_cost->kv_bytes_per_token),
                      fixed(ref_cost->kv_mib_at_context, 1), "—", "—", "—", "", "0", speed_x(ref_cost),
                      on_frontier(*mr.reference)});
  }
  for (const auto& cv : mr.cells) {
    const CellCost* cost = rec.costs.find(cv.cell);
    std::string missing;
    for (const auto& p : cv.missing_probes) missing += (missing.empty() ? "" : ", ") + p;
    t.rows.push_back({data.cells()[cv.cell].types() + (mr.recommended == cv.cell ? " (recommended)" : ""),
                      bytes_text(cv.kv_bytes_per_token), cost ? fixed(cost->kv_mib_at_context, 1) : "—",
                      std::to_string(cv.non_inferior), std::to_string(cv.inferior), std::to_string(cv.unknown), missing,
                      fixed(cv.score, 2), speed_x(cost) + (cv.too_slow.empty() ? "" : " (too slow: " + cv.too_slow + ")"),
                      on_frontier(cv.cell)});
  }
  return t;
}

/// The adaptive cells' verdicts: where each stopped and by which test.
Table adaptive_table(const RunData& data, const ModelRecommendation& mr) {
  Table t;
  t.header = {"cell", "metric", "verdict", "decided at item", "items run", "test"};
  t.numeric = {false, false, false, true, true, false};
  for (const auto& cv : mr.cells) {
    for (const auto& v : cv.metrics) {
      if (!v.adaptive) continue;
      t.rows.push_back({data.cells()[cv.cell].types(), v.probe + "." + v.metric, std::string(stats::to_string(v.result.verdict)),
                        v.adaptive->decided_at > 0 ? std::to_string(v.adaptive->decided_at) : "—",
                        std::to_string(v.adaptive->items_run) + " of " + std::to_string(v.adaptive->items_planned), v.bound});
    }
  }
  return t;
}

/// Every verdict other than non-inferior, with its estimate, bounds and margin.
Table details_table(const RunData& data, const ModelRecommendation& mr) {
  Table t;
  t.header = {"cell", "metric", "n", "Δ", "bounds", "margin", "bound", "verdict"};
  t.numeric = {false, false, true, true, false, true, false, false};
  for (const auto& cv : mr.cells) {
    for (const auto& v : cv.metrics) {
      if (v.result.verdict == stats::Decision::non_inferior) continue;
      t.rows.push_back({data.cells()[cv.cell].types(), v.probe + "." + v.metric, std::to_string(v.result.n),
                        signed_fixed(v.result.estimate, 3),
                        "[" + fixed(v.result.lower, 3) + ", " + fixed(v.result.upper, 3) + "]", shortest(v.margin.value),
                        v.bound,
                        v.adaptive ? std::string(stats::to_string(v.result.verdict)) + " (adaptive, " +
                                         std::to_string(v.adaptive->items_run) + " of " +
                                         std::to_string(v.adaptive->items_planned) + " items run)"
                                   : verdict_word(v.result)});
    }
  }
  return t;
}

void model_section(Document& doc, const RunData& data, const Recommendation& rec, const ModelRecommendation& mr) {
  doc.heading(2, mr.model);
  if (!mr.reference) {
    doc.paragraph("No reference cell: nothing to compare against.");
    return;
  }
  doc.paragraph(answer(data, rec, mr));
  if (mr.nothing_measured) return;  // no verdicts, no ratios: the reference measured nothing
  if (!mr.over_vram.empty()) {
    std::string left = "Left out by --vram " + shortest(*rec.vram_gib) + " GiB (non-inferior, but too large):";
    for (const auto& [cell, need] : mr.over_vram) left += " " + data.cells()[cell].types() + " needs " + need + ";";
    left.back() = '.';
    doc.paragraph(left);
  }
  doc.table(cell_verdict_table(data, rec, mr));
  if (Table t = adaptive_table(data, mr); !t.rows.empty()) {
    doc.paragraph(
           {plain("Adaptive verdicts (the cell stopped once its verdicts were settled; the rest of its items are "
                  "recorded skipped/settled, "),
            code("kvsweep run --resume --no-adaptive"),
            plain(" runs them). Each verdict comes from an "
           "anytime-valid test, its error rate held although checked after every item, or, for a pass/fail metric, "
           "from the full run's own test once no outcome of the items left could change it (curtailment); "
           "unknown when the full run would decide with too small a predictive probability (futility):")})
        .table(std::move(t));
  }
  if (Table t = details_table(data, mr); !t.rows.empty()) {
    const int confidence = static_cast<int>(std::lround((1.0 - rec.alpha) * 100));
    doc.paragraph("Verdicts other than non-inferior (Δ oriented, + is better; bounds one-sided " +
                  std::to_string(confidence) + "% each):")
        .table(std::move(t));
  }
  std::vector<Text> k_vs_v;
  for (const auto& s : mr.k_vs_v) k_vs_v.push_back({plain(explain(s))});
  doc.paragraph("K versus V:").list(std::move(k_vs_v));
}

}  // namespace

Document recommend_document(const RunData& data, const Recommendation& rec) {
  Document doc("kvsweep recommend: " + data.name());
  doc.paragraph(method_text(rec));
  for (const auto& mr : rec.models) model_section(doc, data, rec, mr);
  return doc;
}

std::string recommend_markdown(const RunData& data, const Recommendation& rec) {
  return render_markdown(recommend_document(data, rec));
}

nlohmann::ordered_json recommend_json(const RunData& data, const Recommendation& rec) {
  using ojson = nlohmann::ordered_json;
  ojson models = ojson::array();
  for (const auto& mr : rec.models) {
    ojson cells = ojson::array();
    for (const auto& cv : mr.cells) {
      ojson metrics = ojson::array();
      for (const auto& v : cv.metrics) {
        ojson m{{"probe", v.probe},
                {"metric", v.metric},
                {"kind", std::string(probe::to_string(v.kind))},
                {"higher_is_better", v.higher_is_better},
                {"margin", v.margin.value},
                {"margin_basis", v.margin.basis},
                {"bound", v.bound},
                {"n", v.result.n},
                {"delta", v.result.estimate},
                {"lower", v.result.lower},
                {"upper", v.result.upper},
                {"verdict", std::string(stats::to_string(v.result.verdict))}};
        m["items_needed"] = v.result.items_needed ? ojson(*v.result.items_needed) : ojson(nullptr);
        if (v.adaptive) {
          m["adaptive"] = {{"items_run", v.adaptive->items_run},
                           {"items_planned", v.adaptive->items_planned},
                           {"decided_at", v.adaptive->decided_at > 0 ? ojson(v.adaptive->decided_at) : ojson(nullptr)},
                           {"by", v.adaptive->by.empty() ? ojson(nullptr) : ojson(v.adaptive->by)},
                           {"p_decided", v.adaptive->p_decided >= 0.0 ? ojson(v.adaptive->p_decided) : ojson(nullptr)}};
        }
        metrics.push_back(std::move(m));
      }
      cells.push_back({{"id", data.cells()[cv.cell].id},
                       {"type_k", data.cells()[cv.cell].type_k},
                       {"type_v", data.cells()[cv.cell].type_v},
                       {"kv_bytes_per_token", cv.kv_bytes_per_token},
                       {"eligible", cv.eligible},
                       {"too_slow", cv.too_slow.empty() ? ojson(nullptr) : ojson(cv.too_slow)},
                       {"score", cv.score},
                       {"missing_probes", cv.missing_probes},
                       {"metrics", std::move(metrics)}});
      if (!data.cells()[cv.cell].path.empty()) cells.back()["path"] = data.cells()[cv.cell].path;
      // Where a speed ratio --max-slowdown read came from, when the speed probe could not measure it.
      if (const CellCost* cost = rec.costs.find(cv.cell); cost && !speed_source_note(*cost).empty())
        cells.back()["speed_source"] = speed_source_note(*cost);
    }
    ojson frontier = ojson::array();
    for (std::size_t f : mr.frontier) frontier.push_back(data.cells()[f].id);
    ojson k_vs_v = ojson::array();
    for (const auto& s : mr.k_vs_v) k_vs_v.push_back({{"probe", s.probe}, {"metric", s.metric}, {"sentence", explain(s)}});
    const auto [model, variant] = data.group_parts(mr.model);
    models.push_back({{"model", model},
                      {"reference", mr.reference ? ojson(data.cells()[*mr.reference].id) : ojson(nullptr)},
                      {"recommended", mr.recommended ? ojson(data.cells()[*mr.recommended].id) : ojson(nullptr)},
                      {"nothing_measured", mr.nothing_measured},
                      {"frontier", std::move(frontier)},
                      {"cells", std::move(cells)},
                      {"k_vs_v", std::move(k_vs_v)}});
    if (!variant.empty()) models.back()["variant"] = variant;
    if (rec.vram_gib) models.back()["over_vram"] = over_vram_json(data, mr);
    const RecommendHeadline headline = recommend_headline(mr);
    const HeadlineWords h = explain(headline, data);
    models.back()["headline"] = {{"verdict", h.verdict}, {"sentence", h.sentence}};
    // The evidence the sentence words, as values: which cell, and each judged metric by its role.
    if (headline.evidence_cell) {
      ojson evidence = ojson::array();
      for (const auto& e : headline.evidence) {
        evidence.push_back({{"probe", e.probe}, {"metric", e.metric}, {"role", std::string(probe::to_string(e.role))},
                            {"n", e.n}, {"cell_mean", e.cell_mean}, {"reference_mean", e.reference_mean},
                            {"change", e.change}, {"words", evidence_text(e)}});
        if (e.kind == probe::MetricKind::binary) {
          evidence.back()["worse"] = e.worse;
          evidence.back()["better"] = e.better;
        }
        if (e.margin) evidence.back()["margin"] = *e.margin;
        if (e.verdict) evidence.back()["verdict"] = std::string(stats::to_string(*e.verdict));
      }
      models.back()["headline"]["evidence_cell"] = data.cells()[*headline.evidence_cell].id;
      models.back()["headline"]["evidence"] = std::move(evidence);
    }
  }
  ojson out{{"schema_version", 1},
            {"kind", "kvsweep-recommend"},
            {"run", data.name()},
            {"alpha", rec.alpha},
            {"max_slowdown", rec.max_slowdown ? ojson(*rec.max_slowdown) : ojson(nullptr)},
            {"cost", cost_json(data, rec.costs)},
            {"models", std::move(models)}};
  if (rec.vram_gib) out["vram_gib"] = *rec.vram_gib;
  return out;
}

}  // namespace kvsweep::report

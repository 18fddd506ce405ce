/// The field lists of summary.json's tables: grids, headlines and variant effects.

#include "kvsweep/report/analysis/summary_fields.hpp"

#include <tuple>

namespace kvsweep::report {

namespace {

using ojson = nlohmann::ordered_json;

template <class T>
using Field = SummaryField<T>;

/// A verdict as written ("yes", "no", "reversed"); absent or "" reads as no.
stats::Gradient verdict(const SummaryIn& in, const char* key) {
  const std::string text = in.text(key);
  for (const auto g : {stats::Gradient::yes, stats::Gradient::no, stats::Gradient::reversed})
    if (text == stats::to_string(g)) return g;
  if (!text.empty()) in.site.child(key).fail("expected yes, no or reversed, got \"" + text + "\"");
  return stats::Gradient::no;
}

ojson gradient_json(const stats::GradientResult& g) {
  return ojson{{"n", g.n}, {"rho", g.rho}, {"p", g.p}, {"verdict", std::string(stats::to_string(g.verdict))}};
}

stats::GradientResult read_gradient(const SummaryIn& in, const char* key) {
  if (!in.has(key)) return {};
  const SummaryIn g = in.member(key);
  return {g.count("n"), g.number("rho"), g.number("p"), verdict(g, "verdict")};
}

/// A row (K type) or column (V type) of a grid: its type under `key`, n, mean and ci95.
ojson axis_json(const std::vector<AxisMean>& axis, const char* key) {
  ojson out = ojson::array();
  for (const auto& a : axis)
    out.push_back({{key, a.type}, {"n", a.summary.n}, {"mean", a.summary.mean}, {"ci95", ojson::array({a.ci.lower, a.ci.upper})}});
  return out;
}

AxisMean read_axis(const SummaryIn& in, const char* key) {
  AxisMean a;
  a.type = in.text(key);
  a.summary.n = in.count("n");
  a.summary.mean = in.number("mean");
  std::tie(a.ci.lower, a.ci.upper) = in.interval("ci95");
  return a;
}
AxisMean read_row(const SummaryIn& in) { return read_axis(in, "type_k"); }
AxisMean read_column(const SummaryIn& in) { return read_axis(in, "type_v"); }

constexpr Field<SummaryGrid> kGridFields[] = {
    {"model", [](const SummaryGrid& g, ojson& o) { o["model"] = g.model; },
     [](SummaryGrid& g, const SummaryIn& in) { g.model = in.text("model"); }},
    {"probe", [](const SummaryGrid& g, ojson& o) { o["probe"] = g.probe; },
     [](SummaryGrid& g, const SummaryIn& in) { g.probe = in.text("probe"); }},
    {"metric", [](const SummaryGrid& g, ojson& o) { o["metric"] = g.metric; },
     [](SummaryGrid& g, const SummaryIn& in) { g.metric = in.text("metric"); }},
    {"higher_is_better", [](const SummaryGrid& g, ojson& o) { o["higher_is_better"] = g.higher_is_better; },
     [](SummaryGrid& g, const SummaryIn& in) { g.higher_is_better = in.flag("higher_is_better", true); }},
    {"gradient", [](const SummaryGrid& g, ojson& o) { o["gradient"] = gradient_json(g.gradient); },
     [](SummaryGrid& g, const SummaryIn& in) { g.gradient = read_gradient(in, "gradient"); }},
    {"k_gradient", [](const SummaryGrid& g, ojson& o) { o["k_gradient"] = gradient_json(g.k_gradient); },
     [](SummaryGrid& g, const SummaryIn& in) { g.k_gradient = read_gradient(in, "k_gradient"); }},
    {"v_gradient", [](const SummaryGrid& g, ojson& o) { o["v_gradient"] = gradient_json(g.v_gradient); },
     [](SummaryGrid& g, const SummaryIn& in) { g.v_gradient = read_gradient(in, "v_gradient"); }},
    {"rows", [](const SummaryGrid& g, ojson& o) { o["rows"] = axis_json(g.rows, "type_k"); },
     [](SummaryGrid& g, const SummaryIn& in) { g.rows = in.objects("rows", read_row); }},
    {"columns", [](const SummaryGrid& g, ojson& o) { o["columns"] = axis_json(g.columns, "type_v"); },
     [](SummaryGrid& g, const SummaryIn& in) { g.columns = in.objects("columns", read_column); }},
    {"k_spread", [](const SummaryGrid& g, ojson& o) { o["k_spread"] = g.k_spread; },
     [](SummaryGrid& g, const SummaryIn& in) { g.k_spread = in.number("k_spread"); }},
    {"v_spread", [](const SummaryGrid& g, ojson& o) { o["v_spread"] = g.v_spread; },
     [](SummaryGrid& g, const SummaryIn& in) { g.v_spread = in.number("v_spread"); }},
    // Only in a run with variants.
    {"variant", [](const SummaryGrid& g, ojson& o) { if (!g.variant.empty()) o["variant"] = g.variant; },
     [](SummaryGrid& g, const SummaryIn& in) { g.variant = in.text("variant"); }},
};

/// {mean, sd} of a headline's pass count, and {mean, sd, min, max} of its main metric.
stats::Summary read_spread(const SummaryIn& in, const char* key) {
  if (!in.has(key)) return {};
  const SummaryIn s = in.member(key);
  stats::Summary out;
  out.mean = s.number("mean");
  out.sd = s.number("sd");
  out.min = s.number("min");
  out.max = s.number("max");
  return out;
}

constexpr Field<SummaryHeadline> kHeadlineFields[] = {
    {"model", [](const SummaryHeadline& h, ojson& o) { o["model"] = h.model; },
     [](SummaryHeadline& h, const SummaryIn& in) { h.model = in.text("model"); }},
    {"probe", [](const SummaryHeadline& h, ojson& o) { o["probe"] = h.probe; },
     [](SummaryHeadline& h, const SummaryIn& in) { h.probe = in.text("probe"); }},
    {"combos", [](const SummaryHeadline& h, ojson& o) { o["combos"] = h.combos; },
     [](SummaryHeadline& h, const SummaryIn& in) { h.combos = in.count("combos"); }},
    {"k", [](const SummaryHeadline& h, ojson& o) { o["k"] = h.k; }, [](SummaryHeadline& h, const SummaryIn& in) { h.k = in.count("k"); }},
    {"pass_metric", [](const SummaryHeadline& h, ojson& o) { o["pass_metric"] = h.pass_metric; },
     [](SummaryHeadline& h, const SummaryIn& in) { h.pass_metric = in.text("pass_metric"); }},
    {"pass_count", [](const SummaryHeadline& h, ojson& o) { o["pass_count"] = {{"mean", h.pass_count.mean}, {"sd", h.pass_count.sd}}; },
     [](SummaryHeadline& h, const SummaryIn& in) { h.pass_count = read_spread(in, "pass_count"); }},
    {"main_metric", [](const SummaryHeadline& h, ojson& o) { o["main_metric"] = h.main_metric; },
     [](SummaryHeadline& h, const SummaryIn& in) { h.main_metric = in.text("main_metric"); }},
    {"main",
     [](const SummaryHeadline& h, ojson& o) {
       o["main"] = {{"mean", h.main.mean}, {"sd", h.main.sd}, {"min", h.main.min}, {"max", h.main.max}};
     },
     [](SummaryHeadline& h, const SummaryIn& in) { h.main = read_spread(in, "main"); }},
    {"gradient", [](const SummaryHeadline& h, ojson& o) { o["gradient"] = std::string(stats::to_string(h.gradient)); },
     [](SummaryHeadline& h, const SummaryIn& in) { h.gradient = verdict(in, "gradient"); }},
    // Only in a run with variants.
    {"variant", [](const SummaryHeadline& h, ojson& o) { if (!h.variant.empty()) o["variant"] = h.variant; },
     [](SummaryHeadline& h, const SummaryIn& in) { h.variant = in.text("variant"); }},
};

constexpr Field<SummaryVariantEffect> kVariantEffectFields[] = {
    {"model", [](const SummaryVariantEffect& e, ojson& o) { o["model"] = e.model; },
     [](SummaryVariantEffect& e, const SummaryIn& in) { e.model = in.text("model"); }},
    {"base", [](const SummaryVariantEffect& e, ojson& o) { o["base"] = e.base; },
     [](SummaryVariantEffect& e, const SummaryIn& in) { e.base = in.text("base"); }},
    {"variant", [](const SummaryVariantEffect& e, ojson& o) { o["variant"] = e.variant; },
     [](SummaryVariantEffect& e, const SummaryIn& in) { e.variant = in.text("variant"); }},
    {"type_k", [](const SummaryVariantEffect& e, ojson& o) { o["type_k"] = e.type_k; },
     [](SummaryVariantEffect& e, const SummaryIn& in) { e.type_k = in.text("type_k"); }},
    {"type_v", [](const SummaryVariantEffect& e, ojson& o) { o["type_v"] = e.type_v; },
     [](SummaryVariantEffect& e, const SummaryIn& in) { e.type_v = in.text("type_v"); }},
    {"probe", [](const SummaryVariantEffect& e, ojson& o) { o["probe"] = e.probe; },
     [](SummaryVariantEffect& e, const SummaryIn& in) { e.probe = in.text("probe"); }},
    {"metric", [](const SummaryVariantEffect& e, ojson& o) { o["metric"] = e.metric; },
     [](SummaryVariantEffect& e, const SummaryIn& in) { e.metric = in.text("metric"); }},
    {"base_mean", [](const SummaryVariantEffect& e, ojson& o) { o["base_mean"] = e.base_mean; },
     [](SummaryVariantEffect& e, const SummaryIn& in) { e.base_mean = in.number("base_mean"); }},
    {"variant_mean", [](const SummaryVariantEffect& e, ojson& o) { o["variant_mean"] = e.variant_mean; },
     [](SummaryVariantEffect& e, const SummaryIn& in) { e.variant_mean = in.number("variant_mean"); }},
    {"vs_base", [](const SummaryVariantEffect& e, ojson& o) { o["vs_base"] = write_fields(summary_test_fields(), e.vs_base); },
     [](SummaryVariantEffect& e, const SummaryIn& in) {
       if (in.has("vs_base")) e.vs_base = read_fields(summary_test_fields(), in.member("vs_base"));
     }},
};

}  // namespace

std::span<const SummaryField<SummaryGrid>> summary_grid_fields() { return kGridFields; }
std::span<const SummaryField<SummaryHeadline>> summary_headline_fields() { return kHeadlineFields; }
std::span<const SummaryField<SummaryVariantEffect>> summary_variant_effect_fields() { return kVariantEffectFields; }

}  // namespace kvsweep::report

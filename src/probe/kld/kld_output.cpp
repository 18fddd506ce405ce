/// parse_kld_output and parse_base_output: the numbers llama-perplexity prints, read from its output.

#include "kvsweep/probe/kld/kld.hpp"
#include "kvsweep/probe/tool_text.hpp"

#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>

namespace kvsweep::probe {

namespace {

constexpr std::string_view kPlusMinus = "\xC2\xB1";  // ±, as llama-perplexity prints it

/// Reads a number at `pos` (after spaces); strtod also takes llama.cpp's "nan" / "-nan" / "inf".
std::optional<double> number(std::string_view s, std::size_t& pos) {
  while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t')) ++pos;
  std::string copy(s.substr(pos, 48));
  char* end = nullptr;
  const double v = std::strtod(copy.c_str(), &end);
  if (end == copy.c_str()) return std::nullopt;
  pos += static_cast<std::size_t>(end - copy.c_str());
  return v;
}

bool skip(std::string_view s, std::size_t& pos, std::string_view token) {
  while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t')) ++pos;
  if (s.substr(pos, token.size()) != token) return false;
  pos += token.size();
  return true;
}

/// "value ± uncertainty" (an optional % after either) starting at `pos`.
std::optional<std::pair<double, double>> value_and_uncertainty(std::string_view s, std::size_t& pos) {
  auto v = number(s, pos);
  if (!v) return std::nullopt;
  skip(s, pos, "%");
  if (!skip(s, pos, kPlusMinus) && !skip(s, pos, "+/-")) return std::nullopt;
  auto u = number(s, pos);
  if (!u) return std::nullopt;
  skip(s, pos, "%");
  return std::pair{*v, *u};
}

/// The labelled summary lines ("Mean    KLD:   0.248995 ±   0.010565"), by collapsed label.
/// A label matches whole (or after a log prefix such as "0.01.223.632 I ").
std::map<std::string, std::pair<std::pair<double, double>, std::string>> summary_lines_by_label(std::string_view text,
                                                                                  const std::vector<std::string>& labels) {
  std::map<std::string, std::pair<std::pair<double, double>, std::string>> out;
  for (std::string_view line : split_lines(text)) {
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string head = collapse(line.substr(0, colon));
    for (const auto& label : labels) {
      if (head != label && !head.ends_with(" " + label)) continue;
      std::size_t pos = colon + 1;
      if (auto v = value_and_uncertainty(line, pos)) out[label] = {*v, std::string(line)};
    }
  }
  return out;
}

/// llama-perplexity's distribution labels (tools/perplexity/perplexity.cpp, kl_divergence()) and
/// kvsweep's metric names for them.
const std::vector<std::pair<std::string, std::string>> kLabels = {
    {"Maximum KLD", "kld_max"}, {"99.9% KLD", "kld_p999"}, {"99.0% KLD", "kld_p99"},
    {"95.0% KLD", "kld_p95"},   {"90.0% KLD", "kld_p90"},   {"Median KLD", "kld_median"},
    {"Minimum Δp", "dp_min"},   {"0.1% Δp", "dp_p001"},     {"1.0% Δp", "dp_p01"},
    {"5.0% Δp", "dp_p05"},      {"Median Δp", "dp_median"}, {"95.0% Δp", "dp_p95"},
    {"99.0% Δp", "dp_p99"},     {"99.9% Δp", "dp_p999"},    {"Maximum Δp", "dp_max"}};

/// The single-value distribution lines ("99.9%   KLD:   0.123456", "Median  Δp:  -0.012%"), by
/// collapsed label; the last occurrence wins, as for the means.
std::map<std::string, double> tail_lines(std::string_view text) {
  std::map<std::string, double> out;
  for (std::string_view line : split_lines(text)) {
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string head = collapse(line.substr(0, colon));
    for (const auto& [label, name] : kLabels) {
      if (head != label && !head.ends_with(" " + label)) continue;
      std::size_t pos = colon + 1;
      if (auto v = number(line, pos); v && std::isfinite(*v)) out[name] = *v;
    }
  }
  return out;
}

/// The last cumulative chunk row under the "chunk  PPL  ln(PPL(Q)/PPL(base))  KL Divergence …" header.
std::optional<std::pair<std::vector<std::pair<double, double>>, std::string>> last_chunk_row(std::string_view text) {
  std::optional<std::pair<std::vector<std::pair<double, double>>, std::string>> last;
  bool in_table = false;
  for (std::string_view line : split_lines(text)) {
    if (line.find("KL Divergence") != std::string_view::npos && line.find("Same top p") != std::string_view::npos) {
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    std::size_t pos = 0;
    auto chunk = number(line, pos);
    if (!chunk) continue;
    std::vector<std::pair<double, double>> cols;
    while (cols.size() < 5) {
      auto v = value_and_uncertainty(line, pos);
      if (!v) break;
      cols.push_back(*v);
    }
    if (cols.size() == 5) last = {{cols, std::string(line)}};
  }
  return last;
}

/// The "you need at least N tokens" complaint (and the line after it), if present.
std::optional<std::string> too_short(std::string_view text) {
  auto lines = split_lines(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::size_t at = lines[i].find("you need at least");
    if (at == std::string_view::npos) continue;
    std::string msg(lines[i].substr(at));
    if (i + 1 < lines.size()) {
      const std::size_t more = lines[i + 1].find("tokenizes to only");
      if (more != std::string_view::npos) msg += "; " + std::string(lines[i + 1].substr(lines[i + 1].find("the data file")));
    }
    return msg;
  }
  return std::nullopt;
}

}  // namespace

const std::vector<std::string>& kld_tail_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& l : kLabels) out.push_back(l.second);
    return out;
  }();
  return names;
}

namespace {

/// Why llama-perplexity's output holds fewer chunks than it announced ("kl_divergence: computing over N
/// chunks"); an empty `why` when it holds them all.
struct Incomplete {
  std::string why;
  bool stopped = false;  // the tool said it stopped early ("failed reading log-probs for chunk 12")
};

/// A truncated base file stops llama-perplexity early ("failed reading …") and it still exits 0, with
/// statistics over part of the corpus. Rows that end before the announced count with no such line are
/// either the same (with a summary after them) or an output whose last lines the logger lost.
Incomplete incomplete(std::string_view output) {
  int announced = -1;
  int last_row = 0;
  std::string failed;
  bool in_table = false;
  for (std::string_view line : split_lines(output)) {
    if (const auto at = line.find("computing over "); at != std::string_view::npos) {
      std::size_t pos = at + std::string_view("computing over ").size();
      if (auto n = number(line, pos)) announced = static_cast<int>(*n);
    }
    if (failed.empty() && line.find("failed reading") != std::string_view::npos) failed = collapse(line);
    if (line.find("KL Divergence") != std::string_view::npos && line.find("Same top p") != std::string_view::npos) {
      in_table = true;
      continue;
    }
    std::size_t pos = 0;
    if (in_table)
      if (auto chunk = number(line, pos); chunk && *chunk >= 1 && *chunk == std::floor(*chunk))
        last_row = std::max(last_row, static_cast<int>(*chunk));
  }
  if (!failed.empty())
    return {"llama-perplexity stopped early (\"" + failed + "\") after " + std::to_string(last_row) +
                (announced > 0 ? " of " + std::to_string(announced) : std::string()) + " chunks",
            true};
  if (announced > 0 && last_row > 0 && last_row < announced)
    return {"llama-perplexity computed " + std::to_string(last_row) + " of the " + std::to_string(announced) +
                " chunks it announced",
            false};
  return {};
}

}  // namespace

core::Expected<KldSummary> parse_kld_output(std::string_view output) {
  if (auto msg = too_short(output))
    return core::fail(core::ErrorKind::invalid, "the corpus is too short for this ctx: llama-perplexity: " + *msg +
                                                    " (use a longer corpus or a smaller ctx)");
  // Statistics over part of the chunks are not the cell's: the base logits file may be truncated.
  if (const Incomplete cut = incomplete(output); !cut.why.empty()) {
    // No failure line and no summary after the rows: the output lost its last lines (llama.cpp's logger
    // is not flushed at exit), a parse error the probe runs again; else statistics over part of the corpus.
    if (!cut.stopped && summary_lines_by_label(output, {"Mean KLD"}).empty())
      return core::fail(core::ErrorKind::parse, cut.why + ", and its output ends there (no failure line, no "
                                                          "summary: its last lines were lost); last lines:" +
                                                    output_tail(output));
    return core::fail(core::ErrorKind::process, cut.why + "; the reference cell's base logits file may be truncated "
                                                          "(rerun the reference cell); last lines:" + output_tail(output));
  }
  const std::vector<std::string> labels = {"Mean PPL(Q)",  "Mean PPL(base)", "Mean PPL(Q)/PPL(base)",
                                           "Mean KLD",     "RMS Δp",         "Same top p"};
  auto found = summary_lines_by_label(output, labels);
  KldSummary s;
  if (!found.empty()) {
    std::string missing;
    for (const auto& l : labels)
      if (!found.contains(l)) missing += (missing.empty() ? "'" : ", '") + l + ":'";
    if (!missing.empty())
      return core::fail(core::ErrorKind::parse, "llama-perplexity's summary has no " + missing + " line; last lines:" + output_tail(output));
    std::tie(s.ppl_q, s.ppl_q_se) = found["Mean PPL(Q)"].first;
    std::tie(s.ppl_base, s.ppl_base_se) = found["Mean PPL(base)"].first;
    std::tie(s.ppl_ratio, s.ppl_ratio_se) = found["Mean PPL(Q)/PPL(base)"].first;
    std::tie(s.mean_kld, s.mean_kld_se) = found["Mean KLD"].first;
    std::tie(s.rms_dp, s.rms_dp_se) = found["RMS Δp"].first;
    std::tie(s.same_top_p, s.same_top_p_se) = found["Same top p"].first;
    s.source = "summary";
    for (const auto& l : labels) s.text += found[l].second + "\n";
    s.tail = tail_lines(output);
  } else if (auto row = last_chunk_row(output)) {
    // Columns: PPL(Q), ln(PPL(Q)/PPL(base)), KLD, RMS Δp %, same top p %; all cumulative.
    const auto& c = row->first;
    std::tie(s.ppl_q, s.ppl_q_se) = c[0];
    s.ppl_ratio = std::exp(c[1].first);
    s.ppl_ratio_se = s.ppl_ratio * c[1].second;  // d exp(x) = exp(x) dx, as the tool's own summary
    s.ppl_base = s.ppl_q / s.ppl_ratio;
    s.ppl_base_se = std::nan("");
    std::tie(s.mean_kld, s.mean_kld_se) = c[2];
    std::tie(s.rms_dp, s.rms_dp_se) = c[3];
    std::tie(s.same_top_p, s.same_top_p_se) = c[4];
    s.source = "chunk_row";
    s.text = row->second + "\n";
  } else {
    return core::fail(core::ErrorKind::parse,
                      "llama-perplexity's output has no 'Mean    KLD:' summary and no chunk rows; last lines:" + output_tail(output));
  }
  for (double v : {s.mean_kld, s.same_top_p, s.ppl_ratio, s.rms_dp, s.ppl_q})
    if (!std::isfinite(v))
      return core::fail(core::ErrorKind::parse, "llama-perplexity printed a non-finite statistic:\n" + s.text);
  return s;
}

core::Expected<BasePerplexity> parse_base_output(std::string_view output) {
  if (auto msg = too_short(output))
    return core::fail(core::ErrorKind::invalid, "the corpus is too short for this ctx: llama-perplexity: " + *msg +
                                                    " (use a longer corpus or a smaller ctx)");
  constexpr std::string_view label = "Final estimate: PPL =";
  for (std::string_view line : split_lines(output)) {
    const std::size_t at = line.find(label);
    if (at == std::string_view::npos) continue;
    std::size_t pos = at + label.size();
    if (auto v = value_and_uncertainty(line, pos)) return BasePerplexity{v->first, v->second};
  }
  return core::fail(core::ErrorKind::parse,
                    "llama-perplexity --kl-divergence-base printed no 'Final estimate: PPL = X +/- Y'; last lines:" +
                        output_tail(output));
}

}  // namespace kvsweep::probe

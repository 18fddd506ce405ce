#pragma once
/// What a probe declares about each metric it emits — its direction, its kind and its role — so
/// that reports, `compare` and recommendations read the declaration and never guess from values.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/core/error.hpp"

namespace kvsweep::probe {

/// Which way is better; `none` for values that have no better side (a base perplexity, a count of steps).
enum class Direction { higher_better, lower_better, none };

/// What values the metric takes: 0/1 (paired with McNemar), a count, or a continuous value (Wilcoxon).
enum class MetricKind { binary, count, continuous };

/// What a metric says about a cell, which decides whether it gates by default:
/// - `quality`: scored against ground truth (recall's lines, a tool call's correctness, telephone's
///   similarity to the original text): a loss the user would see. Gated by default.
/// - `distance`: how far the next-token distribution moved from the reference's (KL divergence, its
///   99.9th percentile, Δp, same top token). Gated by default when it declares a threshold (the margin
///   of its non-inferiority verdict: MetricSpec::threshold); reported otherwise.
/// - `change`: how the output differs from the reference's (byte-identical answer, common prefix, the
///   first flipped token). Greedy text of a real model always diverges after a small perturbation, so a
///   change is not a loss: reported, gated only when named (recommend --gate, a probe's "gate").
/// - `diagnostic` (standard errors, base perplexities, token and cut counts, timings): reported only;
/// - `cost` (speeds a tool measured): the Cost section and `recommend --max-slowdown`, never a verdict.
/// quality, distance and change are "judged" (is_judged): compare checks them all against a baseline
/// (a change of kvsweep or the server moves each), the report gives each a verdict beside the reference.
enum class MetricRole { quality, distance, change, diagnostic, cost };

struct MetricSpec {
  std::string name;
  Direction direction = Direction::higher_better;
  MetricKind kind = MetricKind::continuous;
  MetricRole role = MetricRole::quality;
  /// A distance's threshold, in the metric's units past the reference's value: how far it may move
  /// and still read as no loss. It is the metric's default non-inferiority margin and makes it gate
  /// by default; `threshold_why` says where the number comes from (shown with the margin).
  std::optional<double> threshold = std::nullopt;
  std::string threshold_why = {};

  bool higher_is_better() const { return direction != Direction::lower_better; }
  /// A verdict beside the reference is read from it (quality, distance, change, with a better side).
  bool is_judged() const {
    return (role == MetricRole::quality || role == MetricRole::distance || role == MetricRole::change) &&
           direction != Direction::none;
  }
  /// Gated when neither --gate nor the probe's "gate" names the metrics: quality, and distance with a threshold.
  bool gated_by_default() const {
    return is_judged() && (role == MetricRole::quality || (role == MetricRole::distance && threshold.has_value()));
  }
  bool is_binary() const { return kind == MetricKind::binary; }
};

/// The distance thresholds (default margins) of the KL divergences the field ranks K/V pairs by, in nats
/// past the reference's 0. Measured on SmolLM2-135M-Instruct (CPU, llama.cpp de3ff81): mean KLD per token
/// q8_0/q8_0 0.0043 and q4_0/q4_0 0.070 on English text (llama-perplexity), q8_0 K 0.0023 and q4_0 K 0.014
/// on kld's default code corpus; divergence's mean KL per step q8_0 K 0.0026–0.0031, q4_0 K 0.028–0.035.
/// 0.01 lies between every 8-bit and every 4-bit K measured; the 99.9th percentile's 0.1 between q8_0 K's
/// 0.011 and q4_0 K's 0.25 on the code corpus (0.039 and 1.21 at q8_0/q4_0 on English). A probe's config
/// or `recommend --margin` sets another.
inline constexpr double kMeanKlThreshold = 0.01;
inline constexpr const char* kMeanKlWhy = "between 8-bit and 4-bit K on SmolLM2, README Metrics";
inline constexpr double kKldP999Threshold = 0.1;
inline constexpr const char* kKldP999Why = "between q8_0 and q4_0 K's 99.9th percentile on SmolLM2, README Metrics";

/// Shorthands for the declaration lists of the probes.
MetricSpec quality(std::string name, Direction direction, MetricKind kind);
/// A distance; with `threshold` (and why that number) it gates by default, its threshold the margin.
MetricSpec distance(std::string name, Direction direction, MetricKind kind, std::optional<double> threshold = std::nullopt,
                    std::string threshold_why = {});
MetricSpec change(std::string name, Direction direction, MetricKind kind);
MetricSpec diagnostic(std::string name, MetricKind kind, Direction direction = Direction::none);
MetricSpec cost(std::string name, Direction direction, MetricKind kind = MetricKind::continuous);

std::string_view to_string(Direction direction);  // "higher", "lower", "none"
std::string_view to_string(MetricKind kind);      // "binary", "count", "continuous"
std::string_view to_string(MetricRole role);      // "quality", "distance", "change", "diagnostic", "cost"
std::optional<Direction> parse_direction(std::string_view text);
std::optional<MetricKind> parse_metric_kind(std::string_view text);
std::optional<MetricRole> parse_metric_role(std::string_view text);

/// {"name", "direction", "kind", "role", "higher_is_better", "threshold"?, "threshold_why"?} —
/// higher_is_better for readers of older manifests.
nlohmann::json to_json(const MetricSpec& spec);

/// The declaration written by to_json. Fails (ErrorKind::parse) naming `where` and the key when a
/// field is missing or holds an unknown word; a bare name or an object with only "name" and
/// "higher_is_better" (older manifests) is not a declaration: use has_declaration() first.
core::Expected<MetricSpec> metric_spec_from_json(const nlohmann::json& j, std::string_view where);

/// Whether a manifest's or summary's metric entry carries a declaration (direction, kind and role).
bool has_declaration(const nlohmann::json& j);

/// The spec named `name` in `specs`, or nullptr.
const MetricSpec* find_metric(const std::vector<MetricSpec>& specs, std::string_view name);

}  // namespace kvsweep::probe

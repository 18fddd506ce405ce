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

/// `quality` metrics are gated by compare and drive the gradient and the recommendation;
/// `diagnostic` ones (standard errors, base perplexities, token and cut counts, timings) are reported only;
/// `cost` ones (speeds a tool measured) are reported in the Cost section and filter `recommend
/// --max-slowdown`, never gated as quality.
enum class MetricRole { quality, diagnostic, cost };

struct MetricSpec {
  std::string name;
  Direction direction = Direction::higher_better;
  MetricKind kind = MetricKind::continuous;
  MetricRole role = MetricRole::quality;

  bool higher_is_better() const { return direction != Direction::lower_better; }
  bool is_quality() const { return role == MetricRole::quality && direction != Direction::none; }
  bool is_binary() const { return kind == MetricKind::binary; }
};

/// Shorthands for the declaration lists of the probes.
MetricSpec quality(std::string name, Direction direction, MetricKind kind);
MetricSpec diagnostic(std::string name, MetricKind kind, Direction direction = Direction::none);
MetricSpec cost(std::string name, Direction direction, MetricKind kind = MetricKind::continuous);

std::string_view to_string(Direction direction);  // "higher", "lower", "none"
std::string_view to_string(MetricKind kind);      // "binary", "count", "continuous"
std::string_view to_string(MetricRole role);      // "quality", "diagnostic", "cost"
std::optional<Direction> parse_direction(std::string_view text);
std::optional<MetricKind> parse_metric_kind(std::string_view text);
std::optional<MetricRole> parse_metric_role(std::string_view text);

/// {"name", "direction", "kind", "role", "higher_is_better"} — the last for readers of older manifests.
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

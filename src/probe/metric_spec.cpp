#include "kvsweep/probe/metric_spec.hpp"

#include <utility>

namespace kvsweep::probe {

namespace {

MetricSpec spec_of(std::string name, Direction direction, MetricKind kind, MetricRole role) {
  MetricSpec spec;
  spec.name = std::move(name);
  spec.direction = direction;
  spec.kind = kind;
  spec.role = role;
  return spec;
}

}  // namespace

MetricSpec quality(std::string name, Direction direction, MetricKind kind) {
  return spec_of(std::move(name), direction, kind, MetricRole::quality);
}

MetricSpec distance(std::string name, Direction direction, MetricKind kind, std::optional<double> threshold,
                    std::string threshold_why) {
  MetricSpec spec = spec_of(std::move(name), direction, kind, MetricRole::distance);
  spec.threshold = threshold;
  spec.threshold_why = std::move(threshold_why);
  return spec;
}

MetricSpec change(std::string name, Direction direction, MetricKind kind) {
  return spec_of(std::move(name), direction, kind, MetricRole::change);
}

MetricSpec diagnostic(std::string name, MetricKind kind, Direction direction) {
  return spec_of(std::move(name), direction, kind, MetricRole::diagnostic);
}

MetricSpec cost(std::string name, Direction direction, MetricKind kind) {
  return spec_of(std::move(name), direction, kind, MetricRole::cost);
}

std::string_view to_string(Direction direction) {
  switch (direction) {
    case Direction::higher_better: return "higher";
    case Direction::lower_better: return "lower";
    case Direction::none: return "none";
  }
  return "none";
}

std::string_view to_string(MetricKind kind) {
  switch (kind) {
    case MetricKind::binary: return "binary";
    case MetricKind::count: return "count";
    case MetricKind::continuous: return "continuous";
  }
  return "continuous";
}

std::string_view to_string(MetricRole role) {
  switch (role) {
    case MetricRole::quality: return "quality";
    case MetricRole::distance: return "distance";
    case MetricRole::change: return "change";
    case MetricRole::diagnostic: return "diagnostic";
    case MetricRole::cost: return "cost";
  }
  return "diagnostic";
}

std::optional<Direction> parse_direction(std::string_view text) {
  for (auto d : {Direction::higher_better, Direction::lower_better, Direction::none}) {
    if (to_string(d) == text) return d;
  }
  return std::nullopt;
}

std::optional<MetricKind> parse_metric_kind(std::string_view text) {
  for (auto k : {MetricKind::binary, MetricKind::count, MetricKind::continuous}) {
    if (to_string(k) == text) return k;
  }
  return std::nullopt;
}

std::optional<MetricRole> parse_metric_role(std::string_view text) {
  for (auto r : {MetricRole::quality, MetricRole::distance, MetricRole::change, MetricRole::diagnostic, MetricRole::cost}) {
    if (to_string(r) == text) return r;
  }
  return std::nullopt;
}

nlohmann::json to_json(const MetricSpec& spec) {
  nlohmann::json j = {{"name", spec.name},
                      {"direction", std::string(to_string(spec.direction))},
                      {"kind", std::string(to_string(spec.kind))},
                      {"role", std::string(to_string(spec.role))},
                      {"higher_is_better", spec.higher_is_better()}};
  if (spec.threshold) {
    j["threshold"] = *spec.threshold;
    j["threshold_why"] = spec.threshold_why;
  }
  return j;
}

bool has_declaration(const nlohmann::json& j) {
  return j.is_object() && j.contains("direction") && j.contains("kind") && j.contains("role");
}

core::Expected<MetricSpec> metric_spec_from_json(const nlohmann::json& j, std::string_view where) {
  const std::string at(where);
  if (!j.is_object() || !j.contains("name") || !j["name"].is_string() || j["name"].get<std::string>().empty()) {
    return core::fail(core::ErrorKind::parse, at + ": a metric declaration needs a non-empty string \"name\"");
  }
  MetricSpec spec;
  spec.name = j["name"].get<std::string>();
  auto word = [&](const char* key) -> std::string {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  auto bad = [&](const char* key, const char* valid) {
    return core::fail(core::ErrorKind::parse, at + ": metric " + spec.name + ": " + key + " '" + word(key) +
                                                  "' is not one of " + valid);
  };
  const auto direction = parse_direction(word("direction"));
  if (!direction) return bad("direction", "higher, lower, none");
  const auto kind = parse_metric_kind(word("kind"));
  if (!kind) return bad("kind", "binary, count, continuous");
  const auto role = parse_metric_role(word("role"));
  if (!role) return bad("role", "quality, distance, change, diagnostic, cost");
  spec.direction = *direction;
  spec.kind = *kind;
  spec.role = *role;
  if (const auto t = j.find("threshold"); t != j.end()) {
    if (!t->is_number() || t->get<double>() < 0.0)
      return core::fail(core::ErrorKind::parse, at + ": metric " + spec.name + ": threshold " + t->dump() +
                                                    " is not a number ≥ 0");
    spec.threshold = t->get<double>();
    spec.threshold_why = word("threshold_why");
  }
  return spec;
}

const MetricSpec* find_metric(const std::vector<MetricSpec>& specs, std::string_view name) {
  for (const auto& s : specs) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

}  // namespace kvsweep::probe

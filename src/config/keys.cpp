#include "kvsweep/config/keys.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

#include "kvsweep/core/error.hpp"

namespace kvsweep::config {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::optional<std::string> nearest(std::string_view word, const std::vector<std::string>& candidates) {
  auto lower = [](std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  const std::string w = lower(word);
  std::optional<std::string> best;
  std::size_t best_d = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(w, lower(c));
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  if (best || w.empty()) return best;
  for (const auto& c : candidates) {
    if (lower(c).starts_with(w)) return c;
  }
  return std::nullopt;
}

std::string did_you_mean(std::string_view given, const std::vector<std::string>& candidates) {
  if (auto n = nearest(given, candidates)) return " (did you mean '" + *n + "'?)";
  return "";
}

std::string did_you_mean_or_list(std::string_view given, const std::vector<std::string>& candidates) {
  if (std::string hint = did_you_mean(given, candidates); !hint.empty()) return hint;
  std::string list;
  for (const auto& c : candidates) list += (list.empty() ? "" : ", ") + c;
  return " (one of: " + list + ")";
}

Site Site::child(std::string_view key) const {
  return Site(m_file, m_path.empty() ? std::string(key) : m_path + "." + std::string(key));
}

Site Site::index(std::size_t i) const { return Site(m_file, m_path + "[" + std::to_string(i) + "]"); }

void Site::fail(const std::string& message) const {
  std::string where = m_file;
  if (!m_path.empty()) where += (where.empty() ? "" : ": ") + m_path;
  throw core::FatalError(where.empty() ? message : where + ": " + message);
}

std::string shown(const nlohmann::json& value) {
  std::string text = value.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return std::string(value.type_name()) + " " + text;
}

void check_keys(const nlohmann::json& obj, const std::vector<std::string>& allowed, const Site& site) {
  if (!obj.is_object()) site.fail("expected an object, got " + shown(obj));
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (std::find(allowed.begin(), allowed.end(), it.key()) != allowed.end()) continue;
    site.fail("unknown key '" + it.key() + "'" + did_you_mean_or_list(it.key(), allowed));
  }
}

std::string get_string(const nlohmann::json& obj, const std::string& key, const std::string& fallback, const Site& site) {
  if (!obj.contains(key)) return fallback;
  const auto& v = obj[key];
  if (!v.is_string()) site.child(key).fail("expected a string, got " + shown(v));
  return v.get<std::string>();
}

std::string get_required_string(const nlohmann::json& obj, const std::string& key, const Site& site) {
  if (!obj.is_object() || !obj.contains(key)) site.child(key).fail("missing (a string)");
  std::string v = get_string(obj, key, "", site);
  if (v.empty()) site.child(key).fail("must not be empty");
  return v;
}

const nlohmann::json& get_member(const nlohmann::json& obj, const std::string& key, const Site& site) {
  if (!obj.is_object() || !obj.contains(key)) site.child(key).fail("missing");
  return obj[key];
}

double get_number(const nlohmann::json& obj, const std::string& key, double fallback, const Site& site) {
  if (!obj.contains(key)) return fallback;
  const auto& v = obj[key];
  if (!v.is_number()) site.child(key).fail("expected a number, got " + shown(v));
  if (!std::isfinite(v.get<double>())) site.child(key).fail("expected a finite number, got " + shown(v));
  return v.get<double>();
}

double get_number_in(const nlohmann::json& obj, const std::string& key, double fallback, double lo, double hi,
                     const Site& site, Bound lower) {
  const double v = get_number(obj, key, fallback, site);
  const bool above = lower == Bound::open ? v > lo : v >= lo;
  if (!above || v > hi) {
    std::ostringstream range;
    range << (lower == Bound::open ? "greater than " : "at least ") << lo;
    if (std::isfinite(hi)) range << " and at most " << hi;
    site.child(key).fail("must be " + range.str() + ", got " + obj[key].dump());
  }
  return v;
}

long long get_int(const nlohmann::json& obj, const std::string& key, long long fallback, const Site& site) {
  if (!obj.contains(key)) return fallback;
  const auto& v = obj[key];
  if (!v.is_number_integer()) site.child(key).fail("expected an integer, got " + shown(v));
  return v.get<long long>();
}

long long get_int_in(const nlohmann::json& obj, const std::string& key, long long fallback, long long lo, long long hi,
                     const Site& site) {
  const auto out_of_range = [&](const std::string& got) {
    site.child(key).fail("must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " + got);
  };
  // An unsigned value above LLONG_MAX would wrap in get_int; it is out of range either way.
  if (obj.contains(key) && obj[key].is_number_unsigned() &&
      obj[key].get<unsigned long long>() > static_cast<unsigned long long>(std::max(hi, 0LL))) {
    out_of_range(obj[key].dump());
  }
  const long long v = get_int(obj, key, fallback, site);
  if (v < lo || v > hi) out_of_range(std::to_string(v));
  return v;
}

std::string get_one_of(const nlohmann::json& obj, const std::string& key, const std::string& fallback,
                       const std::vector<std::string>& allowed, const Site& site) {
  std::string v = get_string(obj, key, fallback, site);
  if (std::find(allowed.begin(), allowed.end(), v) == allowed.end()) {
    site.child(key).fail("unknown value '" + v + "'" + did_you_mean_or_list(v, allowed));
  }
  return v;
}

bool get_bool(const nlohmann::json& obj, const std::string& key, bool fallback, const Site& site) {
  if (!obj.contains(key)) return fallback;
  const auto& v = obj[key];
  if (!v.is_boolean()) site.child(key).fail("expected true or false, got " + shown(v));
  return v.get<bool>();
}

std::vector<std::string> get_strings(const nlohmann::json& obj, const std::string& key,
                                     const std::vector<std::string>& fallback, const Site& site) {
  if (!obj.contains(key)) return fallback;
  const auto& v = obj[key];
  if (!v.is_array()) site.child(key).fail("expected an array of strings, got " + shown(v));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) site.child(key).index(i).fail("expected a string, got " + shown(v[i]));
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

}  // namespace kvsweep::config

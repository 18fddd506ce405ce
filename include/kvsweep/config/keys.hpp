#pragma once
/// Helpers for validating JSON config objects: unknown keys with a nearest-key hint,
/// typed getters whose errors name the file and the key.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvsweep::config {

/// Levenshtein distance (for "did you mean …?").
std::size_t edit_distance(std::string_view a, std::string_view b);
/// The candidate closest to `word`, if it is a plausible typo: within max(2, length/3) edits,
/// letters compared without case, or else the first candidate that starts with `word`.
std::optional<std::string> nearest(std::string_view word, const std::vector<std::string>& candidates);

/// The one "did you mean" hint of every config message: " (did you mean 'x'?)" for the nearest
/// candidate, or "" when none is near.
std::string did_you_mean(std::string_view given, const std::vector<std::string>& candidates);
/// As did_you_mean, but " (one of: a, b, c)" when no candidate is near.
std::string did_you_mean_or_list(std::string_view given, const std::vector<std::string>& candidates);

/// Where in which file a value sits; builds messages `file: path.key: what`.
class Site {
 public:
  Site(std::string file, std::string path) : m_file(std::move(file)), m_path(std::move(path)) {}
  Site child(std::string_view key) const;
  Site index(std::size_t i) const;
  const std::string& file() const { return m_file; }
  const std::string& path() const { return m_path; }
  /// Throws core::FatalError("file: path: message"); an empty file or path is left out with its ": ".
  [[noreturn]] void fail(const std::string& message) const;

 private:
  std::string m_file;
  std::string m_path;
};

/// How a value shows in a message: its JSON type and its text, cut to 60 characters
/// (`string "30"`, `number 2.5`, `array [1,2]`).
std::string shown(const nlohmann::json& value);

/// Throws if `obj` is not an object or holds a key not in `allowed` (suggesting the nearest).
void check_keys(const nlohmann::json& obj, const std::vector<std::string>& allowed, const Site& site);

// The getters return `fallback` when `obj` has no `key`; a value of the wrong type fails
// "expected a string, got number 3" at site.key.
std::string get_string(const nlohmann::json& obj, const std::string& key, const std::string& fallback, const Site& site);
/// A string that must be there and not be empty: fails "missing (a string)" or "must not be empty".
std::string get_required_string(const nlohmann::json& obj, const std::string& key, const Site& site);
/// obj[key]; fails "missing" when `obj` is not an object or has no `key`.
const nlohmann::json& get_member(const nlohmann::json& obj, const std::string& key, const Site& site);
/// A finite number.
double get_number(const nlohmann::json& obj, const std::string& key, double fallback, const Site& site);
/// Whether the lower bound of get_number_in is allowed (`at least lo`) or not (`greater than lo`).
enum class Bound { closed, open };
/// get_number, and fails unless lo <= value <= hi ("must be at least lo and at most hi, got v";
/// an infinite hi is left out of the message).
double get_number_in(const nlohmann::json& obj, const std::string& key, double fallback, double lo, double hi,
                     const Site& site, Bound lower = Bound::closed);
long long get_int(const nlohmann::json& obj, const std::string& key, long long fallback, const Site& site);
/// get_int, and fails unless lo <= value <= hi ("must be between lo and hi, got v").
long long get_int_in(const nlohmann::json& obj, const std::string& key, long long fallback, long long lo, long long hi,
                     const Site& site);
/// A string that must be one of `allowed`: "unknown value 'chta' (did you mean 'chat'?)", or the
/// allowed values listed when none is near.
std::string get_one_of(const nlohmann::json& obj, const std::string& key, const std::string& fallback,
                       const std::vector<std::string>& allowed, const Site& site);
bool get_bool(const nlohmann::json& obj, const std::string& key, bool fallback, const Site& site);
std::vector<std::string> get_strings(const nlohmann::json& obj, const std::string& key,
                                     const std::vector<std::string>& fallback, const Site& site);

/// Whether get_objects takes an absent or empty array (`any`) or wants at least one object.
enum class Need { any, one_or_more };

/// The array obj[key] of objects, each read by `read(element, site.key[i])`. Absent is empty
/// (Need::any) or "missing (an array of objects)"; an element that is not an object fails at key[i].
template <class T, class Read>
std::vector<T> get_objects(const nlohmann::json& obj, const std::string& key, const Site& site, Read read,
                           Need need = Need::any) {
  std::vector<T> out;
  if (!obj.is_object() || !obj.contains(key)) {
    if (need == Need::one_or_more) site.child(key).fail("missing (an array of objects)");
    return out;
  }
  const nlohmann::json& list = obj[key];
  const Site at = site.child(key);
  if (!list.is_array()) at.fail("expected an array of objects, got " + shown(list));
  if (list.empty() && need == Need::one_or_more) at.fail("must hold at least one object");
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_object()) at.index(i).fail("expected an object, got " + shown(list[i]));
    out.push_back(read(list[i], at.index(i)));
  }
  return out;
}

}  // namespace kvsweep::config

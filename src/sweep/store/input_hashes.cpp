#include "kvsweep/sweep/store/input_hashes.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace kvsweep::sweep {

namespace {

/// obj[key] when it is a string, else "" (manifests are read leniently).
std::string text(const nlohmann::json& obj, const char* key) {
  const auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

/// A probe's files by config key, in the order it read them: (path, sha256).
using Files = std::map<std::string, std::vector<std::pair<std::string, std::string>>>;

/// The probe named `name` in a manifest's probes array, or null.
const nlohmann::json* find_probe(const nlohmann::json& probes, const std::string& name) {
  if (!probes.is_array()) return nullptr;
  for (const auto& p : probes)
    if (p.is_object() && text(p, "name") == name) return &p;
  return nullptr;
}

Files files_of(const nlohmann::json& probe) {
  Files out;
  const auto inputs = probe.find("inputs");
  if (inputs == probe.end() || !inputs->is_array()) return out;
  for (const auto& f : *inputs)
    if (f.is_object()) out[text(f, "key")].emplace_back(text(f, "path"), text(f, "sha256"));
  return out;
}

/// The files of one key that differ, position by position: a shard may read the same file under
/// another folder, so the path names the file and the content decides.
void compare_key(const std::string& probe, const std::string& key, const Files& a, const Files& b,
                 std::vector<InputChange>& out) {
  static const std::vector<std::pair<std::string, std::string>> none;
  const auto& fa = a.contains(key) ? a.at(key) : none;
  const auto& fb = b.contains(key) ? b.at(key) : none;
  for (std::size_t i = 0; i < std::max(fa.size(), fb.size()); ++i) {
    const std::string sha_a = i < fa.size() ? fa[i].second : "";
    const std::string sha_b = i < fb.size() ? fb[i].second : "";
    if (sha_a != sha_b) out.push_back({probe, key, i < fa.size() ? fa[i].first : fb[i].first, sha_a, sha_b});
  }
}

}  // namespace

std::vector<InputChange> changed_inputs(const nlohmann::json& a, const nlohmann::json& b) {
  std::vector<InputChange> out;
  if (!a.is_array()) return out;
  for (const auto& pa : a) {
    if (!pa.is_object() || !pa.contains("inputs")) continue;
    const std::string name = text(pa, "name");
    const nlohmann::json* pb = find_probe(b, name);
    if (!pb) continue;
    const Files fa = files_of(pa);
    const Files fb = files_of(*pb);
    Files keys = fa;
    keys.insert(fb.begin(), fb.end());
    for (const auto& [key, files] : keys) compare_key(name, key, fa, fb, out);
  }
  return out;
}

std::vector<std::string> describe_lines(const std::vector<InputChange>& changes, const std::string& a_side,
                                        const std::string& b_side) {
  const auto sha = [](const std::string& s) { return s.empty() ? std::string("not read") : "sha256 " + s; };
  std::vector<std::string> out;
  for (const auto& c : changes)
    out.push_back("probe '" + c.probe + "' " + c.key + " " + c.path + ": " + sha(c.sha256_a) + " " + a_side + ", " +
                  sha(c.sha256_b) + " " + b_side);
  return out;
}

std::string describe_input_changes(const std::vector<InputChange>& changes, const std::string& a_side, const std::string& b_side) {
  std::string out;
  for (const auto& line : describe_lines(changes, a_side, b_side)) out += (out.empty() ? "" : "\n") + line;
  return out;
}

}  // namespace kvsweep::sweep

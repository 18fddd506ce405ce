/// parse_telephone_config: a telephone probe's JSON config checked and read into TelephoneConfig.

#include "kvsweep/probe/telephone.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <fstream>
#include <limits>
#include <numeric>
#include <set>
#include <sstream>

#include "kvsweep/config/keys.hpp"

namespace kvsweep::probe {

namespace {

const std::vector<std::string> known_keys{
    "kind",       "name", "texts",  "texts_file",        "template",  "preset", "hops",  "temperature", "seeds",
    "max_tokens", "budget_factor", "budget_plus", "mode", "system", "suppress_thinking", "threshold", "top_k",  "top_p", "min_p"};

/// Typed, range-checked reads of one telephone probe object; every failure goes through
/// config::Site, so it names the file and the key path like every other config message.
class Reader {
 public:
  Reader(const nlohmann::json& config, const ConfigSite& site) : m_config(config), m_site(site.file, site.path) {}

  [[noreturn]] void fail(std::string_view key, const std::string& what) const {
    if (key.empty()) m_site.fail(what);
    m_site.child(key).fail(what);
  }

  static std::string shown(const nlohmann::json& value) {
    std::string text = value.dump();
    if (text.size() > 60) text = text.substr(0, 57) + "...";
    return std::string(value.type_name()) + " " + text;
  }

  bool has(std::string_view key) const { return m_config.contains(std::string(key)); }
  const nlohmann::json& at(std::string_view key) const { return m_config.at(std::string(key)); }

  std::string string(std::string_view key) const {
    const auto& v = at(key);
    if (!v.is_string()) fail(key, "expected a string, got " + shown(v));
    return v.get<std::string>();
  }
  bool boolean(std::string_view key) const {
    const auto& v = at(key);
    if (!v.is_boolean()) fail(key, "expected true or false, got " + shown(v));
    return v.get<bool>();
  }
  long long integer(std::string_view key, long long lo, long long hi) const {
    const auto& v = at(key);
    if (!v.is_number_integer()) fail(key, "expected an integer, got " + shown(v));
    // Unsigned values above LLONG_MAX are out of range either way.
    if (v.is_number_unsigned() && v.get<unsigned long long>() > static_cast<unsigned long long>(hi)) {
      fail(key, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " + v.dump());
    }
    const long long n = v.get<long long>();
    if (n < lo || n > hi) {
      fail(key, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " + v.dump());
    }
    return n;
  }
  double number(std::string_view key, double lo, double hi, bool lo_open = false) const {
    const auto& v = at(key);
    if (!v.is_number()) fail(key, "expected a number, got " + shown(v));
    const double x = v.get<double>();
    if (!(lo_open ? x > lo : x >= lo) || !(x <= hi)) {
      std::ostringstream range;
      range << (lo_open ? "greater than " : "at least ") << lo << " and at most " << hi;
      fail(key, "must be " + range.str() + ", got " + v.dump());
    }
    return x;
  }

 private:
  const nlohmann::json& m_config;
  config::Site m_site;
};

std::vector<std::string> read_texts_file(const Reader& reader, const std::string& name, const ConfigSite& site) {
  std::filesystem::path path(name);
  if (path.is_relative()) path = site.base_dir / path;
  std::ifstream in(path, std::ios::binary);
  if (!in) reader.fail("texts_file", "cannot read " + path.string() + " (the path is relative to the config file)");
  const bool jsonl = path.extension() == ".jsonl";
  std::vector<std::string> texts;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (!jsonl) {
      texts.push_back(line);
      continue;
    }
    const std::string where = path.string() + ":" + std::to_string(line_no) + ": ";
    const auto object = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (object.is_discarded()) reader.fail("texts_file", where + "not valid JSON");
    if (!object.is_object() || !object.contains("text") || !object["text"].is_string()) {
      reader.fail("texts_file", where + "expected an object with a string \"text\"");
    }
    if (object["text"].get<std::string>().empty()) reader.fail("texts_file", where + "\"text\" is empty");
    texts.push_back(object["text"].get<std::string>());
  }
  if (texts.empty()) reader.fail("texts_file", path.string() + " holds no texts");
  return texts;
}

}  // namespace

TelephoneConfig parse_telephone_config(const nlohmann::json& config, const ConfigSite& site) {
  Reader reader(config, site);
  if (!config.is_object()) reader.fail("", "expected a probe object, got " + Reader::shown(config));

  for (const auto& [key, value] : config.items()) {
    if (std::find(known_keys.begin(), known_keys.end(), key) == known_keys.end()) {
      reader.fail(key, "unknown key for a telephone probe" + config::did_you_mean_or_list(key, known_keys));
    }
  }

  TelephoneConfig out;
  if (!reader.has("kind")) reader.fail("kind", "missing (expected \"telephone\")");
  if (reader.string("kind") != "telephone") {
    reader.fail("kind", "expected \"telephone\", got \"" + reader.string("kind") + "\"");
  }
  if (reader.has("name")) {
    out.name = reader.string("name");
    if (out.name.empty()) reader.fail("name", "must not be empty");
  }

  if (reader.has("texts") && reader.has("texts_file")) {
    reader.fail("texts_file", "give either \"texts\" or \"texts_file\", not both");
  }
  if (reader.has("texts")) {
    const auto& texts = reader.at("texts");
    if (!texts.is_array()) reader.fail("texts", "expected an array of strings, got " + Reader::shown(texts));
    if (texts.empty()) reader.fail("texts", "must hold at least one text");
    out.texts.clear();
    for (std::size_t i = 0; i < texts.size(); ++i) {
      const std::string key = "texts[" + std::to_string(i) + "]";
      if (!texts[i].is_string()) reader.fail(key, "expected a string, got " + Reader::shown(texts[i]));
      if (texts[i].get<std::string>().empty()) reader.fail(key, "must not be empty");
      out.texts.push_back(texts[i].get<std::string>());
    }
  } else if (reader.has("texts_file")) {
    const std::string file = reader.string("texts_file");
    if (file.empty()) reader.fail("texts_file", "must not be empty");
    out.texts = read_texts_file(reader, file, site);
  }

  if (reader.has("template") && reader.has("preset")) {
    reader.fail("preset", "give either \"template\" or \"preset\", not both");
  }
  if (reader.has("template")) {
    out.template_text = reader.string("template");
    if (out.template_text.find("{message}") == std::string::npos) {
      reader.fail("template", "must contain {message}, where the current message goes");
    }
  } else if (reader.has("preset")) {
    out.preset = reader.string("preset");
    auto text = telephone_preset(out.preset);
    if (!text) {
      reader.fail("preset", "unknown preset '" + out.preset + "'" +
                                config::did_you_mean_or_list(out.preset, telephone_preset_names()));
    }
    out.template_text = *text;
  }

  if (reader.has("hops")) out.hops = static_cast<int>(reader.integer("hops", 1, 100000));
  if (reader.has("temperature")) out.temperature = reader.number("temperature", 0.0, 100.0);
  if (reader.has("seeds")) {
    const auto& seeds = reader.at("seeds");
    if (!seeds.is_array()) reader.fail("seeds", "expected an array of integers, got " + Reader::shown(seeds));
    if (seeds.empty()) reader.fail("seeds", "must hold at least one seed");
    out.seeds.clear();
    std::set<std::uint32_t> seen;
    for (std::size_t i = 0; i < seeds.size(); ++i) {
      const std::string key = "seeds[" + std::to_string(i) + "]";
      const auto& s = seeds[i];
      // 0xFFFFFFFF is llama-server's "random seed".
      const bool in_range = s.is_number_integer() && (s.is_number_unsigned() || s.get<long long>() >= 0) &&
                            s.get<unsigned long long>() <= 0xFFFFFFFEull;
      if (!in_range) {
        reader.fail(key, "expected an integer from 0 to 4294967294, got " + Reader::shown(s));
      }
      const auto seed = static_cast<std::uint32_t>(s.get<unsigned long long>());
      if (!seen.insert(seed).second) reader.fail(key, "seed " + std::to_string(seed) + " is listed twice");
      out.seeds.push_back(seed);
    }
  }
  if (reader.has("max_tokens")) out.max_tokens = static_cast<int>(reader.integer("max_tokens", 1, 1 << 24));
  if (reader.has("budget_plus")) out.budget_plus = static_cast<int>(reader.integer("budget_plus", 0, 1 << 24));
  if (reader.has("budget_factor")) {
    const auto& v = config.at("budget_factor");
    if (!v.is_number() || v.get<double>() < 0) reader.fail("budget_factor", "expected a number >= 0, got " + v.dump());
    out.budget_factor = v.get<double>();
  }
  if (reader.has("mode")) {
    const std::string mode = reader.string("mode");
    if (mode == "chat") {
      out.mode = TelephoneMode::chat;
    } else if (mode == "raw") {
      out.mode = TelephoneMode::raw;
    } else {
      reader.fail("mode", "unknown mode '" + mode + "'" + config::did_you_mean_or_list(mode, {"chat", "raw"}));
    }
  }
  if (reader.has("system")) {
    if (out.mode == TelephoneMode::raw) reader.fail("system", "applies to \"mode\": \"chat\" only");
    out.system = reader.string("system");
  }
  if (reader.has("suppress_thinking")) out.suppress_thinking = reader.boolean("suppress_thinking");
  if (reader.has("threshold")) out.threshold = reader.number("threshold", -1.0, 1.0);
  if (reader.has("top_k")) out.top_k = static_cast<int>(reader.integer("top_k", 0, 1 << 24));
  if (reader.has("top_p")) out.top_p = reader.number("top_p", 0.0, 1.0, /*lo_open=*/true);
  if (reader.has("min_p")) out.min_p = reader.number("min_p", 0.0, 1.0);
  return out;
}

}  // namespace kvsweep::probe

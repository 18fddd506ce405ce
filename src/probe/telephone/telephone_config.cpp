/// parse_telephone_config: a telephone probe's JSON config checked and read into TelephoneConfig.

#include "kvsweep/probe/telephone/telephone.hpp"

#include <cstddef>
#include <limits>
#include <set>
#include <sstream>

#include "kvsweep/config/keys.hpp"

namespace kvsweep::probe {

namespace {

const std::vector<std::string> known_keys{
    "kind",       "name", "texts",  "texts_file",        "template",  "preset", "hops",  "temperature", "seeds",
    "max_tokens", "budget_factor", "budget_plus", "mode", "system", "suppress_thinking", "threshold", "top_k",  "top_p", "min_p",
    "limit"};

/// The texts of `texts_file`, and the file read (for the run's identity).
std::vector<std::string> read_texts_file(const std::string& name, const std::filesystem::path& base_dir,
                                         const config::Site& site, std::vector<InputFile>& inputs) {
  std::filesystem::path path(name);
  if (path.is_relative()) path = base_dir / path;
  const InputText file = read_input_file(path, "texts_file", site);
  inputs.push_back(file.file);
  std::istringstream in(file.bytes);
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
    if (object.is_discarded()) site.fail(where + "not valid JSON");
    if (!object.is_object() || !object.contains("text") || !object["text"].is_string()) {
      site.fail(where + "expected an object with a string \"text\"");
    }
    if (object["text"].get<std::string>().empty()) site.fail(where + "\"text\" is empty");
    texts.push_back(object["text"].get<std::string>());
  }
  if (texts.empty()) site.fail(path.string() + " holds no texts");
  return texts;
}

/// "seeds": distinct integers a server takes as a sampling seed.
std::vector<std::uint32_t> read_seeds(const nlohmann::json& seeds, const config::Site& site) {
  if (!seeds.is_array()) site.fail("expected an array of integers, got " + config::shown(seeds));
  if (seeds.empty()) site.fail("must hold at least one seed");
  std::vector<std::uint32_t> out;
  std::set<std::uint32_t> seen;
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    const auto& s = seeds[i];
    // 0xFFFFFFFF is llama-server's "random seed".
    const bool in_range = s.is_number_integer() && (s.is_number_unsigned() || s.get<long long>() >= 0) &&
                          s.get<unsigned long long>() <= 0xFFFFFFFEull;
    if (!in_range) site.index(i).fail("expected an integer from 0 to 4294967294, got " + config::shown(s));
    const auto seed = static_cast<std::uint32_t>(s.get<unsigned long long>());
    if (!seen.insert(seed).second) site.index(i).fail("seed " + std::to_string(seed) + " is listed twice");
    out.push_back(seed);
  }
  return out;
}

}  // namespace

TelephoneConfig parse_telephone_config(const nlohmann::json& cfg, const ConfigSource& where) {
  const config::Site& site = where.site;
  config::check_keys(cfg, known_keys, site);
  const auto has = [&](const char* key) { return cfg.contains(key); };

  TelephoneConfig out;
  if (!has("kind")) site.child("kind").fail("missing (expected \"telephone\")");
  if (const std::string kind = config::get_string(cfg, "kind", "", site); kind != "telephone") {
    site.child("kind").fail("expected \"telephone\", got \"" + kind + "\"");
  }
  out.name = config::get_string(cfg, "name", out.name, site);
  if (out.name.empty()) site.child("name").fail("must not be empty");

  if (has("texts") && has("texts_file")) site.child("texts_file").fail("give either \"texts\" or \"texts_file\", not both");
  if (has("texts")) {
    out.texts = config::get_strings(cfg, "texts", {}, site);
    if (out.texts.empty()) site.child("texts").fail("must hold at least one text");
    for (std::size_t i = 0; i < out.texts.size(); ++i) {
      if (out.texts[i].empty()) site.child("texts").index(i).fail("must not be empty");
    }
  } else if (has("texts_file")) {
    const std::string file = config::get_string(cfg, "texts_file", "", site);
    if (file.empty()) site.child("texts_file").fail("must not be empty");
    out.texts = read_texts_file(file, where.base_dir, site.child("texts_file"), out.inputs);
  }
  // The first `limit` texts: a shipped texts file at the size a run can afford (raising it later
  // grows the run by the next texts).
  if (has("limit")) {
    const auto limit = static_cast<std::size_t>(config::get_int_in(cfg, "limit", 0, 1, 1 << 24, site));
    if (out.texts.size() > limit) out.texts.resize(limit);
  }

  if (has("template") && has("preset")) site.child("preset").fail("give either \"template\" or \"preset\", not both");
  if (has("template")) {
    out.template_text = config::get_string(cfg, "template", "", site);
    if (out.template_text.find("{message}") == std::string::npos) {
      site.child("template").fail("must contain {message}, where the current message goes");
    }
  } else if (has("preset")) {
    out.preset = config::get_string(cfg, "preset", "", site);
    auto text = telephone_preset(out.preset);
    if (!text) {
      site.child("preset").fail("unknown preset '" + out.preset + "'" +
                                config::did_you_mean_or_list(out.preset, telephone_preset_names()));
    }
    out.template_text = *text;
  }

  out.hops = static_cast<int>(config::get_int_in(cfg, "hops", out.hops, 1, 100000, site));
  out.temperature = config::get_number_in(cfg, "temperature", out.temperature, 0.0, 100.0, site);
  if (has("seeds")) out.seeds = read_seeds(cfg["seeds"], site.child("seeds"));
  out.max_tokens = static_cast<int>(config::get_int_in(cfg, "max_tokens", out.max_tokens, 1, 1 << 24, site));
  out.budget_plus = static_cast<int>(config::get_int_in(cfg, "budget_plus", out.budget_plus, 0, 1 << 24, site));
  out.budget_factor = config::get_number_in(cfg, "budget_factor", out.budget_factor, 0.0,
                                            std::numeric_limits<double>::infinity(), site);
  if (has("mode")) {
    out.mode = config::get_one_of(cfg, "mode", "", {"chat", "raw"}, site) == "raw" ? TelephoneMode::raw : TelephoneMode::chat;
  }
  if (has("system")) {
    if (out.mode == TelephoneMode::raw) site.child("system").fail("applies to \"mode\": \"chat\" only");
    out.system = config::get_string(cfg, "system", "", site);
  }
  out.suppress_thinking = config::get_bool(cfg, "suppress_thinking", out.suppress_thinking, site);
  out.threshold = config::get_number_in(cfg, "threshold", out.threshold, -1.0, 1.0, site);
  out.top_k = static_cast<int>(config::get_int_in(cfg, "top_k", out.top_k, 0, 1 << 24, site));
  out.top_p = config::get_number_in(cfg, "top_p", out.top_p, 0.0, 1.0, site, config::Bound::open);
  out.min_p = config::get_number_in(cfg, "min_p", out.min_p, 0.0, 1.0, site);
  return out;
}

}  // namespace kvsweep::probe

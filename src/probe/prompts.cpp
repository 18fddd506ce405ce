#include "kvsweep/probe/prompts.hpp"

#include <sstream>

namespace kvsweep::probe {

std::vector<Item> prompt_items(const std::vector<Prompt>& prompts) {
  std::vector<Item> out;
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    nlohmann::json spec = {{"prompt", prompts[i].text}};
    if (prompts[i].expect) spec["expect"] = prompts[i].expect->to_json();
    out.push_back({"p" + std::to_string(i), std::move(spec)});
  }
  return out;
}

bool Prompts::any_expect() const {
  for (const auto& p : prompts)
    if (p.expect) return true;
  return false;
}

std::vector<Prompt> parse_prompts_file(const InputText& file, const config::Site& site) {
  const bool jsonl = std::filesystem::path(file.file.path).extension() == ".jsonl";
  std::istringstream in(file.bytes);
  std::vector<Prompt> out;
  std::string line;
  for (std::size_t n = 1; std::getline(in, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (!jsonl) {
      out.push_back({line, std::nullopt});
      continue;
    }
    const std::string where = file.file.path + ":" + std::to_string(n) + ": ";
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || !j.contains("prompt") || !j["prompt"].is_string())
      site.fail(where + "expected {\"prompt\": \"…\"}");
    Prompt p{j["prompt"].get<std::string>(), std::nullopt};
    if (j.contains("expect")) {
      auto e = score::parse_expect(j["expect"]);
      if (!e) site.fail(where + e.error());
      p.expect = std::move(*e);
    }
    out.push_back(std::move(p));
  }
  if (out.empty()) site.fail(file.file.path + " holds no prompts");
  return out;
}

namespace {

std::vector<Prompt> inline_prompts(const nlohmann::json& cfg, const config::Site& site) {
  std::vector<Prompt> out;
  if (!cfg.contains("prompts")) return out;
  const config::Site at = site.child("prompts");
  const auto& list = cfg["prompts"];
  if (!list.is_array()) at.fail("expected an array of prompts (strings or {\"prompt\", \"expect\"} objects)");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto& v = list[i];
    if (v.is_string()) {
      out.push_back({v.get<std::string>(), std::nullopt});
      continue;
    }
    if (!v.is_object()) at.index(i).fail("expected a prompt (a string or {\"prompt\", \"expect\"})");
    config::check_keys(v, {"prompt", "expect"}, at.index(i));
    Prompt p{config::get_required_string(v, "prompt", at.index(i)), std::nullopt};
    if (v.contains("expect")) {
      auto e = score::parse_expect(v["expect"]);
      if (!e) at.index(i).child("expect").fail(e.error());
      p.expect = std::move(*e);
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

Prompts read_prompts(const nlohmann::json& cfg, const ConfigSource& where, const std::vector<std::string>& fallback) {
  const config::Site& site = where.site;
  Prompts out{inline_prompts(cfg, site), {}};
  if (const std::string name = config::get_string(cfg, "prompts_file", "", site); !name.empty()) {
    std::filesystem::path path(name);
    if (path.is_relative()) path = where.base_dir / path;
    const InputText file = read_input_file(path, "prompts_file", site.child("prompts_file"));
    std::vector<Prompt> more = parse_prompts_file(file, site.child("prompts_file"));
    for (auto& p : more) out.prompts.push_back(std::move(p));
    out.inputs.push_back(file.file);
  }
  if (out.prompts.empty())
    for (const auto& text : fallback) out.prompts.push_back({text, std::nullopt});
  return out;
}

std::vector<Prompt> without_expect(std::vector<Prompt> prompts) {
  for (auto& p : prompts) p.expect.reset();
  return prompts;
}

}  // namespace kvsweep::probe

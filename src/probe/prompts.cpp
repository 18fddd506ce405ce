#include "kvsweep/probe/prompts.hpp"

#include <sstream>

namespace kvsweep::probe {

std::vector<Item> prompt_items(const std::vector<std::string>& prompts) {
  std::vector<Item> out;
  for (std::size_t i = 0; i < prompts.size(); ++i) out.push_back({"p" + std::to_string(i), {{"prompt", prompts[i]}}});
  return out;
}

std::vector<std::string> parse_prompts_file(const InputText& file, const config::Site& site) {
  const bool jsonl = std::filesystem::path(file.file.path).extension() == ".jsonl";
  std::istringstream in(file.bytes);
  std::vector<std::string> out;
  std::string line;
  for (std::size_t n = 1; std::getline(in, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (!jsonl) {
      out.push_back(line);
      continue;
    }
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || !j.contains("prompt") || !j["prompt"].is_string())
      site.fail(file.file.path + ":" + std::to_string(n) + ": expected {\"prompt\": \"…\"}");
    out.push_back(j["prompt"].get<std::string>());
  }
  if (out.empty()) site.fail(file.file.path + " holds no prompts");
  return out;
}

Prompts read_prompts(const nlohmann::json& cfg, const ConfigSource& where, const std::vector<std::string>& fallback) {
  const config::Site& site = where.site;
  Prompts out{config::get_strings(cfg, "prompts", {}, site), {}};
  if (const std::string name = config::get_string(cfg, "prompts_file", "", site); !name.empty()) {
    std::filesystem::path path(name);
    if (path.is_relative()) path = where.base_dir / path;
    const InputText file = read_input_file(path, "prompts_file", site.child("prompts_file"));
    const std::vector<std::string> more = parse_prompts_file(file, site.child("prompts_file"));
    out.texts.insert(out.texts.end(), more.begin(), more.end());
    out.inputs.push_back(file.file);
  }
  if (out.texts.empty()) out.texts = fallback;
  return out;
}

}  // namespace kvsweep::probe

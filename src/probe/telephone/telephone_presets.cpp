/// The telephone probe's named prompt templates (presets) and how a template takes the message.

#include "kvsweep/probe/telephone/telephone.hpp"

#include <array>

namespace kvsweep::probe {

namespace {

struct Preset {
  std::string_view name;
  std::string_view text;
};

constexpr std::array<Preset, 3> presets{{
    // The published harness behind seed 000 (Python, Ollama), as quoted in issue 4. The
    // seed's blog post words its methodology line as "Paraphrase this message for the next
    // agent: [previous]"; the issue's wording is the one the harness is said to use.
    {"published", telephone_default_template},
    // Perez et al. (2025), "When LLMs Play the Telephone Game: Cultural Attractors as
    // Conceptual Tools to Evaluate LLMs in Multi-turn Settings", ICLR 2025, arXiv:2407.04503,
    // task "rephrase" (code: github.com/jeremyperez2/TelephoneGameLLM).
    // APPROXIMATED: the exact prompt text could not be checked here; this keeps the task's
    // intent (reword, same meaning, output only the new text). Use "template" to pin the
    // paper's exact wording.
    {"perez2025",
     "Rephrase the following text. Keep its meaning, and output only the rephrased text.\n\n{message}"},
    // Mohamed et al. (2025), "LLM as a Broken Telephone: Iterative Generation Distorts
    // Information", ACL 2025, arXiv:2502.20258 — the rephrasing ablation's prompt
    // (`prompt3` in Scripts/Ablations/Rephrase/*/Rephrase/config.py of
    // github.com/amr-mohamedd/LLM-as-a-Broken-Telephone), with Python's `{}` written as
    // `{message}` and the surrounding newlines of the triple-quoted string dropped.
    {"mohamed2025",
     "Given a passage, rephrase it while preserving all the original meaning and without losing any context. \n"
     "Do not write an introduction or a summary. Return only the rephrased passage.\n\n"
     "Rephrase the following text: {message}"},
}};

}  // namespace

std::optional<std::string> telephone_preset(std::string_view name) {
  for (const auto& preset : presets) {
    if (preset.name == name) return std::string(preset.text);
  }
  return std::nullopt;
}

std::vector<std::string> telephone_preset_names() {
  std::vector<std::string> names;
  for (const auto& preset : presets) names.emplace_back(preset.name);
  return names;
}

std::string render_template(std::string_view tmpl, std::string_view message) {
  constexpr std::string_view placeholder = "{message}";
  std::string out;
  out.reserve(tmpl.size() + message.size());
  std::size_t pos = 0;
  while (true) {
    const std::size_t found = tmpl.find(placeholder, pos);
    if (found == std::string_view::npos) break;
    out.append(tmpl.substr(pos, found - pos));
    out.append(message);
    pos = found + placeholder.size();
  }
  out.append(tmpl.substr(pos));
  return out;
}

}  // namespace kvsweep::probe

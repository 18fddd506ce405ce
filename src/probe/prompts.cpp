#include "kvsweep/probe/prompts.hpp"

namespace kvsweep::probe {

std::vector<Item> prompt_items(const std::vector<std::string>& prompts) {
  std::vector<Item> out;
  for (std::size_t i = 0; i < prompts.size(); ++i) out.push_back({"p" + std::to_string(i), {{"prompt", prompts[i]}}});
  return out;
}

}  // namespace kvsweep::probe

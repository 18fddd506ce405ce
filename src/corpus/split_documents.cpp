#include "kvsweep/corpus/english.hpp"

namespace kvsweep::corpus {

std::vector<std::string> split_documents(std::string_view text, std::size_t parts) {
  std::vector<std::string> out;
  if (parts == 0 || text.empty()) return out;
  std::size_t start = 0;
  for (std::size_t k = 1; k <= parts && start < text.size(); ++k) {
    std::size_t end = text.size();
    if (k < parts) {
      const std::size_t share = text.size() * k / parts;
      const std::size_t nl = text.find('\n', std::max(share, start));
      end = nl == std::string_view::npos ? text.size() : nl + 1;
    }
    out.emplace_back(text.substr(start, end - start));
    start = end;
  }
  return out;
}

}  // namespace kvsweep::corpus

#include "kvsweep/probe/longkl/longkl.hpp"

namespace kvsweep::probe {

std::string depth_bin_name(int depth) {
  if (depth > 0 && depth % 1024 == 0) return "d" + std::to_string(depth / 1024) + "k";
  return "d" + std::to_string(depth);
}

int DepthSchedule::positions() const {
  int n = 0;
  for (const auto& w : windows) n += w.length;
  return n;
}

int DepthSchedule::evaluated_tokens() const {
  if (windows.empty()) return 0;
  const DepthWindow& last = windows.back();
  // Every token before the last position is evaluated once; the first request re-evaluates nothing.
  return last.start + last.length - 1;
}

core::Expected<DepthSchedule> make_depth_schedule(int min_depth, int depth, int windows, int window) {
  auto invalid = [](std::string why) { return core::fail(core::ErrorKind::invalid, std::move(why)); };
  if (window < 1) return invalid("window must be at least 1 position");
  if (windows < 1) return invalid("windows must be at least 1 per bin");
  if (min_depth < 1 || min_depth > depth)
    return invalid("min_depth (" + std::to_string(min_depth) + ") must lie in 1 … depth (" + std::to_string(depth) + ")");
  DepthSchedule out;
  // Doubling; the bin that would be followed by one starting at depth or beyond runs to depth itself.
  for (long long start = min_depth;; start *= 2) {
    const long long next = start * 2;
    const bool last = next >= depth;
    out.bins.push_back({depth_bin_name(static_cast<int>(start)), static_cast<int>(start),
                        last ? depth + 1 : static_cast<int>(next)});
    if (last) break;
  }
  for (std::size_t b = 0; b < out.bins.size(); ++b) {
    const DepthBin& bin = out.bins[b];
    const int width = bin.end - bin.start;
    const int spacing = width / windows;
    if (spacing < window)
      return invalid("bin " + bin.name + " (positions " + std::to_string(bin.start) + " … " + std::to_string(bin.end - 1) +
                     ") has room for " + std::to_string(width / window) + " windows of " + std::to_string(window) +
                     " positions, not " + std::to_string(windows) + ": lower windows or window, or raise min_depth");
    for (int j = 0; j < windows; ++j) {
      // Each window centred in its share of the bin: the bins' depths are sampled evenly.
      const int start = bin.start + j * spacing + (spacing - window) / 2;
      out.windows.push_back({bin.name + "-w" + std::to_string(j), b, start, window});
    }
  }
  return out;
}

}  // namespace kvsweep::probe

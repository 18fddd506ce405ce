#pragma once
/// The `longkl` probe: KL divergence of each cell's next-token distribution from the reference's at
/// chosen depths of one long document, measured through the running server.
///
/// The document is tokenized once per cell. Positions lie in depth bins (log-spaced, doubling from
/// `min_depth` to `depth`), in windows of consecutive positions; every cell visits them in the same
/// ascending order, each request a token-id prompt that extends the previous one, answered with one
/// token and its top-n probabilities: the first request of a window evaluates the gap since the last
/// window, each next one a single token (llama-server's cache_prompt). A cell thus costs about one
/// prefill of the document plus one step per position, and every cell evaluates the same batches
/// (logits differ across batch shapes). Every request's evaluated count (timings.prompt_n) is
/// checked against the schedule: a mismatch fails the item, never re-prefills silently.
///
/// Config: {"kind": "longkl", "name": …, "corpus": FILE | {"builtin": "english"} |
/// {"random_bodies": {…}} (default: random bodies, long enough for `depth`), "depth": 8000 (the
/// deepest position), "min_depth": 1024 (the first bin's start), "windows": 4 (per bin), "window": 8
/// (positions per window), "top_k": 20 (the reference's list), "cell_top_k": 100 (each cell's list,
/// several times top_k so that the reference's ids are found in it), "gate_bins": ["d4k", …]
/// (bins whose mean KL gates the verdict beside the overall mean)}. Items are the windows, keys
/// "d1k-w0", …; a bin is named by where it starts ("d1k": 1024 up to the next bin).
///
/// KL is KL(reference ‖ cell) over the reference's top-K and one tail bucket: a lower bound of the
/// full KL (score::top_kl_bound), said so wherever it is shown.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/probe/probe.hpp"

namespace kvsweep::probe {

/// One depth bin: positions [start, end), named by its start ("d1k", "d2k", "d512").
struct DepthBin {
  std::string name;
  int start = 0;
  int end = 0;
};

/// One window: `length` consecutive positions from `start`, in bin `bin` (an index into the bins).
/// A position p is the prompt length: the distribution scored is that of token p given tokens [0, p).
struct DepthWindow {
  std::string key;  // "<bin name>-w<j>", the item's key
  std::size_t bin = 0;
  int start = 0;
  int length = 0;
};

struct DepthSchedule {
  std::vector<DepthBin> bins;
  std::vector<DepthWindow> windows;  // ascending, never overlapping
  /// Positions scored, and the tokens a cell evaluates when the schedule runs once in order: every
  /// position up to the last (the prefill of the gaps) plus one per scored position after a
  /// window's first.
  int positions() const;
  int evaluated_tokens() const;
};

/// The bins (doubling from min_depth; the last one, the one a bin from depth or beyond would follow,
/// ends at depth + 1, so depth itself may be scored) and
/// `windows` windows of `window` positions spread evenly over each bin. Requires
/// 1 <= window, 1 <= windows, 1 <= min_depth <= depth and each bin wide enough for its windows
/// (otherwise an `invalid` error saying which).
core::Expected<DepthSchedule> make_depth_schedule(int min_depth, int depth, int windows, int window);

/// The bin name of a depth: "d" + depth/1024 + "k" when depth is a multiple of 1024, else "d" + depth.
std::string depth_bin_name(int depth);

std::unique_ptr<Probe> make_longkl_probe(const nlohmann::json& config, const ConfigSource& site);

}  // namespace kvsweep::probe

#pragma once
/// Greedy decoding for probes that compare cells answer for answer.

#include "kvsweep/server/api.hpp"

namespace kvsweep::probe {

/// Temperature 0 with every other sampling field explicit (top_k 40, top_p 1, min_p 0, seed 42),
/// so a server's defaults never change a result.
inline void set_greedy(server::CompletionRequest& req) {
  req.temperature = 0.0;
  req.top_k = 40;
  req.top_p = 1.0;
  req.min_p = 0.0;
  req.seed = 42;
}

}  // namespace kvsweep::probe

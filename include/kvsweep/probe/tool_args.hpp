#pragma once
/// Which llama-server arguments the llama.cpp tools a probe runs also take, from one table of
/// llama.cpp's flags (src/probe/tool_args.cpp): llama-bench (the speed probe) and llama-perplexity (kld).

#include <string>
#include <vector>

namespace kvsweep::probe {

/// The llama-server args that llama-bench also takes, in llama-bench's spelling: threads, batch sizes,
/// -fa, -ngl (auto → -1, all → -2), split and device flags (lists joined with '/' as llama-bench
/// wants), -nkvo → -nkvo 1, --no-op-offload → -nopo 1. The rest (server-only flags, -c, -ctk/-ctv,
/// -np, -tb) are dropped.
std::vector<std::string> bench_args(const std::vector<std::string>& server_args);

/// The llama-server args that llama-perplexity also understands (threads, batch sizes, -fa,
/// offload and device flags); the rest (server-only flags, -c, -ctk/-ctv, -np) are dropped.
std::vector<std::string> perplexity_args(const std::vector<std::string>& server_args);

}  // namespace kvsweep::probe

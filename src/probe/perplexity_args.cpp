/// perplexity_args: which llama-server arguments llama-perplexity also takes.

#include "kvsweep/probe/kld.hpp"

#include <algorithm>

namespace kvsweep::probe {

std::vector<std::string> perplexity_args(const std::vector<std::string>& server_args) {
  static const std::vector<std::string> with_value = {
      "-t",   "--threads",      "-tb", "--threads-batch", "-b",    "--batch-size", "-ub",   "--ubatch-size",
      "-fa",  "--flash-attn",   "-ngl", "--gpu-layers",   "--n-gpu-layers", "-sm", "--split-mode", "-ts",
      "--tensor-split", "-mg",  "--main-gpu", "-dev",     "--device", "--numa", "-ot", "--override-tensor",
      "-ncmoe", "--n-cpu-moe", "-lm",  "--load-mode"};
  static const std::vector<std::string> flags = {"-nkvo", "--no-kv-offload", "-kvo", "--kv-offload", "--swa-full",
                                                 "-nr",   "--no-repack",     "--repack", "-cmoe", "--cpu-moe",
                                                 "--no-op-offload"};
  auto in = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  std::vector<std::string> out;
  for (std::size_t i = 0; i < server_args.size(); ++i) {
    const std::string& a = server_args[i];
    const std::string flag = a.substr(0, a.find('='));
    const bool inline_value = flag.size() != a.size();
    if (in(with_value, flag)) {
      out.push_back(a);
      if (!inline_value && i + 1 < server_args.size()) out.push_back(server_args[++i]);
    } else if (in(flags, flag)) {
      out.push_back(a);
    } else if (!inline_value && i + 1 < server_args.size() && !server_args[i + 1].starts_with("-")) {
      ++i;  // an unknown (server-only) flag's value goes with it
    }
  }
  return out;
}

}  // namespace kvsweep::probe

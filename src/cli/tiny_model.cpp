#include <cstdio>

#include "kvsweep/cli/commands.hpp"
#include "kvsweep/core/error.hpp"
#include "kvsweep/core/exit_codes.hpp"
#include "kvsweep/model/tiny_model.hpp"

namespace kvsweep::cli {

void register_tiny_model(CLI::App& app, Commands& commands) {
  auto* sub = app.add_subcommand("tiny-model",
                                 "Write the tiny synthetic GGUF (llama, 2 layers, GQA 4/2, head 64) used by tests and "
                                 "the demo; same seed, same bytes");
  struct Opts {
    std::string out;
    std::uint64_t seed = 1;
    std::string vocab;
    std::uint32_t ctx = 131072;
  };
  auto opts = std::make_shared<Opts>();
  sub->add_option("-o,--output", opts->out, "Output GGUF file")->required();
  sub->add_option("--seed", opts->seed, "Seed for the random weights")->capture_default_str();
  sub->add_option("--vocab", opts->vocab,
                  "GGUF whose tokenizer is copied (default: llama.cpp's models/ggml-vocab-llama-spm.gguf from "
                  "the scripts/llama-cpp cache, or $KVSWEEP_LLAMA_SRC/models)");
  sub->add_option("--context-length", opts->ctx, "Trained context written to the metadata")->capture_default_str();
  sub->callback([&commands, opts] {
    commands.action = [opts] {
      model::TinyModelOptions o;
      o.seed = opts->seed;
      o.vocab = opts->vocab.empty() ? model::default_vocab_path() : std::filesystem::path(opts->vocab);
      o.context_length = opts->ctx;
      if (!std::filesystem::exists(o.vocab)) {
        throw core::FatalError("vocab file " + o.vocab.string() +
                               " not found; run scripts/llama-cpp (or pass --vocab FILE)");
      }
      auto r = model::write_tiny_model(opts->out, o);
      if (!r) throw core::FatalError(r.error().message);
      std::fprintf(stderr, "wrote %s (seed %llu)\n", opts->out.c_str(), static_cast<unsigned long long>(opts->seed));
      return core::exit_code::ok;
    };
  });
}

}  // namespace kvsweep::cli

#include <cstdio>

#include "kvsweep/cli/commands.hpp"
#include "kvsweep/core/error.hpp"
#include "kvsweep/core/exit_codes.hpp"
#include "kvsweep/model/copy_model.hpp"
#include "kvsweep/model/tiny_model.hpp"

namespace kvsweep::cli {

void register_tiny_model(CLI::App& app, Commands& commands) {
  auto* sub = app.add_subcommand(
      "tiny-model",
      "Write a synthetic GGUF (llama, 2 layers) used by tests and the demo; same arguments, same bytes.\n"
      "  --kind random (default): seeded random weights, GQA 4/2, head 64 — a model that does nothing useful,\n"
      "    for plumbing and for greedy-output / KL gradients.\n"
      "  --kind copy: constructed (not trained) weights that copy from the context: given the last J tokens,\n"
      "    it finds where they occurred before and continues from there. With the recall probe's\n"
      "    \"cue\": \"signature\" it recalls function bodies verbatim; key outliers (--outlier) make q4_0 K\n"
      "    lose lines when llama.cpp's attention rotation is off (LLAMA_ATTN_ROT_DISABLE=1).\n"
      "    A calibrated instrument, not a language model (src/model/copy_model.cpp explains each knob).");
  struct Opts {
    std::string out;
    std::string kind = "random";
    std::uint64_t seed = 1;
    std::string vocab;
    std::uint32_t ctx = 131072;
    model::CopyModelOptions copy;
  };
  auto opts = std::make_shared<Opts>();
  sub->add_option("-o,--output", opts->out, "Output GGUF file")->required();
  sub->add_option("--kind", opts->kind, "random or copy")
      ->check(CLI::IsMember({"random", "copy"}))
      ->capture_default_str();
  sub->add_option("--seed", opts->seed, "Seed for the weights (random) or the token codes and frequencies (copy)")
      ->capture_default_str();
  sub->add_option("--vocab", opts->vocab,
                  "GGUF whose tokenizer is copied (default: llama.cpp's models/ggml-vocab-llama-spm.gguf from "
                  "the scripts/llama-cpp cache, or $KVSWEEP_LLAMA_SRC/models)");
  sub->add_option("--context-length", opts->ctx, "Trained context written to the metadata")->capture_default_str();
  auto* copy = sub->add_option_group("copy model", "Knobs of --kind copy");
  model::CopyModelOptions& c = opts->copy;
  copy->add_option("--match-length", c.match_length,
                   "Tokens that must match before a copy (short: runs shared by many lines mislead it)")
      ->capture_default_str();
  copy->add_option("--outlier", c.outlier,
                   "Key outlier κ per 32-value block: no effect at f16, widens q4_0's rounding (0: none)")
      ->capture_default_str();
  copy->add_option("--code-dims", c.code_dims, "Dimensions of each token's code (cross-talk ~ 1/sqrt)")
      ->capture_default_str();
  copy->add_option("--fast-pairs", c.fast_pairs, "RoPE pairs measuring offsets (sidelobes ~ sqrt)")
      ->capture_default_str();
  copy->add_option("--match-sharpness", c.match_sharpness, "Layer-2 logit per matching token")->capture_default_str();
  copy->add_option("--offset-sharpness", c.offset_sharpness, "Layer-1 logit per unit of positional kernel")
      ->capture_default_str();
  sub->callback([&commands, opts, sub] {
    commands.action = [opts, sub] {
      if (opts->kind != "copy") {
        for (const char* knob : {"--match-length", "--outlier", "--code-dims", "--fast-pairs", "--match-sharpness",
                                 "--offset-sharpness"}) {
          if (sub->count(knob) > 0) {
            throw core::FatalError(std::string("tiny-model: ") + knob + " is a knob of the copy model; add --kind copy");
          }
        }
      }
      const std::filesystem::path vocab =
          opts->vocab.empty() ? model::default_vocab_path() : std::filesystem::path(opts->vocab);
      if (!std::filesystem::exists(vocab)) {
        throw core::FatalError("vocab file " + vocab.string() + " not found; run scripts/llama-cpp (or pass --vocab FILE)");
      }
      core::Expected<void> r;
      if (opts->kind == "copy") {
        model::CopyModelOptions o = opts->copy;
        o.seed = opts->seed;
        o.vocab = vocab;
        o.context_length = opts->ctx;
        if (const std::string problem = model::check_copy_model(o); !problem.empty()) {
          throw core::FatalError("tiny-model --kind copy: " + problem);
        }
        r = model::write_copy_model(opts->out, o);
      } else {
        model::TinyModelOptions o;
        o.seed = opts->seed;
        o.vocab = vocab;
        o.context_length = opts->ctx;
        r = model::write_tiny_model(opts->out, o);
      }
      if (!r) throw core::FatalError(r.error().message);
      std::fprintf(stderr, "wrote %s (%s, seed %llu)\n", opts->out.c_str(), opts->kind.c_str(),
                   static_cast<unsigned long long>(opts->seed));
      return core::exit_code::ok;
    };
  });
}

}  // namespace kvsweep::cli

// The recall tools of DESIGN.md's command line: `corpus random-bodies`, `extract`, `sample` and
// `score` — the corpus/ and score/ building blocks of the recall probe, usable on their own
// (e.g. to check a selection or a score against the published Python harness).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/cli/commands.hpp"
#include "kvsweep/config/keys.hpp"
#include "kvsweep/core/error.hpp"
#include "kvsweep/core/exit_codes.hpp"
#include "kvsweep/core/host.hpp"
#include "kvsweep/corpus/extract.hpp"
#include "kvsweep/corpus/random_bodies.hpp"
#include "kvsweep/corpus/sample.hpp"
#include "kvsweep/score/recall_score.hpp"

namespace kvsweep::cli {

namespace {

using nlohmann::json;

/// The corpus the files make (joined as the recall probe joins them), or a FatalError.
corpus::Corpus load(const std::vector<std::string>& files, int min_body_lines) {
  auto corpus = corpus::load_corpus(files, std::filesystem::current_path(), min_body_lines);
  if (!corpus) throw core::FatalError(corpus.error().message);
  return std::move(*corpus);
}

/// Each target's lines in its own file (the corpus's lines shift when several files are joined).
std::map<std::string, corpus::Target> file_local_targets(const std::vector<std::string>& files, int min_body_lines) {
  std::map<std::string, corpus::Target> out;
  if (files.size() == 1) return out;  // one file: corpus lines are file lines
  for (const auto& f : files) {
    for (auto& t : load({f}, min_body_lines).targets) out.try_emplace(f + "\n" + t.name, std::move(t));
  }
  return out;
}

json target_json(const corpus::Target& t, const std::map<std::string, corpus::Target>& local) {
  const auto it = local.find(t.file + "\n" + t.name);
  const corpus::Target& in_file = it == local.end() ? t : it->second;
  return {{"name", t.name},
          {"file", t.file},
          {"line", in_file.start_line},
          {"body_start_line", in_file.body_start_line},
          {"body_lines", t.body.size()},
          {"corpus_body_start_line", t.body_start_line}};
}

void print_table(const std::vector<corpus::Target>& targets, const std::map<std::string, corpus::Target>& local) {
  std::size_t width = 4;
  for (const auto& t : targets) width = std::max(width, t.name.size());
  std::printf("%-*s  %-30s  %s\n", static_cast<int>(width), "name", "file:line", "body lines");
  for (const auto& t : targets) {
    const json j = target_json(t, local);
    const std::string where = t.file + ":" + std::to_string(j["line"].get<int>());
    std::printf("%-*s  %-30s  %zu\n", static_cast<int>(width), t.name.c_str(), where.c_str(), t.body.size());
  }
}

struct FileOpts {
  std::vector<std::string> files;
  int min_body_lines = corpus::k_min_body_lines;
  bool json = false;
};

void add_file_options(CLI::App* sub, FileOpts& o) {
  sub->add_option("FILE", o.files, "Source files (.py; .js .mjs .cjs; .php), joined in order as one corpus")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("--min-body-lines", o.min_body_lines, "A target needs at least this many body lines")
      ->capture_default_str()
      ->check(CLI::Range(1, 1'000'000));
  sub->add_flag("--json", o.json, "JSON on stdout instead of a table");
}

void register_extract(CLI::App& app, Commands& commands) {
  auto* sub = app.add_subcommand(
      "extract",
      "List the named functions a recall question can ask for (codeneedle's rules), with their body lines");
  sub->footer(
      "Several files are joined as the recall probe joins them (a `// ====== path ======` header per file); "
      "a name already found in an earlier file is dropped. `line` is the signature line in the file, "
      "`corpus_body_start_line` the body's first line in the joined text (what sampling stratifies on).");
  auto o = std::make_shared<FileOpts>();
  add_file_options(sub, *o);
  sub->callback([&commands, o] {
    commands.action = [o] {
      const corpus::Corpus c = load(o->files, o->min_body_lines);
      const auto local = file_local_targets(o->files, o->min_body_lines);
      if (o->json) {
        json targets = json::array();
        for (const auto& t : c.targets) targets.push_back(target_json(t, local));
        const json out = {{"files", c.files},
                          {"language", corpus::to_string(c.language)},
                          {"total_lines", c.total_lines},
                          {"targets", targets}};
        std::printf("%s\n", out.dump(2).c_str());
      } else {
        print_table(c.targets, local);
        std::fflush(stdout);
        std::fprintf(stderr, "%zu targets in %d lines\n", c.targets.size(), c.total_lines);
      }
      return core::exit_code::ok;
    };
  });
}

void register_sample(CLI::App& app, Commands& commands) {
  auto* sub = app.add_subcommand(
      "sample", "The functions the recall probe asks for: codeneedle's stratified sample of the targets");
  sub->footer(
      "Bit-compatible with the published harness: targets sorted by body start line, bucket "
      "min(k-1, line*k/total_lines), one random.Random(seed).choice per non-empty bucket, then shuffle "
      "the rest and pop from its end until k. Listed in the order chosen.");
  struct Opts : FileOpts {
    int k = 16;
    std::int64_t seed = 42;
  };
  auto o = std::make_shared<Opts>();
  add_file_options(sub, *o);
  sub->add_option("--k", o->k, "How many functions")->capture_default_str()->check(CLI::Range(1, 1'000'000));
  sub->add_option("--seed", o->seed, "random.Random seed")->capture_default_str();
  sub->callback([&commands, o] {
    commands.action = [o] {
      const corpus::Corpus c = load(o->files, o->min_body_lines);
      const auto local = file_local_targets(o->files, o->min_body_lines);
      const auto chosen = corpus::stratified_sample(c.targets, c.total_lines, o->k, o->seed);
      if (o->json) {
        json selected = json::array();
        for (const auto& t : chosen) selected.push_back(target_json(t, local));
        const json out = {{"files", c.files}, {"k", o->k},
                          {"seed", o->seed},  {"total_lines", c.total_lines},
                          {"targets", c.targets.size()}, {"selected", selected}};
        std::printf("%s\n", out.dump(2).c_str());
      } else {
        print_table(chosen, local);
        std::fflush(stdout);
        std::fprintf(stderr, "%zu of %zu targets (k %d, seed %lld)\n", chosen.size(), c.targets.size(), o->k,
                     static_cast<long long>(o->seed));
      }
      return core::exit_code::ok;
    };
  });
}

/// One case of `kvsweep score`; malformed values fail through the config getters, naming the key.
json score_case(const json& c, const config::Site& where) {
  if (!c.is_object()) where.fail("expected a JSON object, got " + std::string(c.type_name()));
  static const std::vector<std::string> known = {"primary", "bonus", "response", "relax_indent", "align", "pass_lines"};
  for (auto it = c.begin(); it != c.end(); ++it) {
    if (std::find(known.begin(), known.end(), it.key()) == known.end()) {
      where.fail("unknown key \"" + it.key() + "\"; known: primary, bonus, response, relax_indent, align, pass_lines");
    }
  }
  if (!c.contains("primary")) where.fail("missing \"primary\" (an array of lines)");
  const auto primary = config::get_strings(c, "primary", {}, where);
  const auto bonus = config::get_strings(c, "bonus", {}, where);
  if (!c.contains("response") || !c["response"].is_string()) {
    where.child("response").fail("must be the model's answer as a string");
  }
  score::RecallOptions options;
  options.primary_lines = static_cast<int>(primary.size());
  options.relax_indent = config::get_bool(c, "relax_indent", options.relax_indent, where);
  const std::string align = config::get_string(c, "align", "difflib", where);
  if (align != "difflib" && align != "lcs") where.fail("\"align\" must be \"difflib\" or \"lcs\", got \"" + align + "\"");
  options.align = align == "lcs" ? score::Alignment::lcs : score::Alignment::difflib;
  const long long pass_lines = config::get_int(c, "pass_lines", options.pass_lines, where);
  if (pass_lines < 0) where.child("pass_lines").fail("must be >= 0");
  options.pass_lines = static_cast<int>(pass_lines);
  const auto s = score::score_recall(primary, bonus, c["response"].get<std::string>(), options);
  return {{"primary_matched", s.primary_matched}, {"primary_total", primary.size()},
          {"bonus_matched", s.bonus_matched},     {"bonus_total", bonus.size()},
          {"hallucinated", s.hallucinated},       {"produced_lines", s.produced_lines},
          {"passed", s.passed}};
}

void register_score(CLI::App& app, Commands& commands) {
  auto* sub = app.add_subcommand("score", "Score recall answers: a JSON case on stdin, its score as JSON on stdout");
  sub->footer(
      "stdin: {\"primary\":[...], \"bonus\":[...], \"response\":\"...\", \"relax_indent\":false, "
      "\"align\":\"difflib\"|\"lcs\", \"pass_lines\":8} — or an array of such cases, scored in order.\n"
      "stdout: {\"primary_matched\", \"primary_total\", \"bonus_matched\", \"bonus_total\", \"hallucinated\", "
      "\"produced_lines\", \"passed\"} (an array for an array).\n"
      "As codeneedle scores: a leading <think>…</think> is dropped, lines are right-stripped (and left-stripped "
      "with relax_indent), markdown fences removed, blank lines trimmed at both ends; difflib = "
      "SequenceMatcher(a=expected, b=produced, autojunk=False) matching blocks; hallucinated = non-blank produced "
      "lines in no block; passed = primary_matched >= pass_lines.");
  auto json_flag = std::make_shared<bool>(false);
  sub->add_flag("--json", *json_flag, "JSON in, JSON out (the only format; accepted for DESIGN.md's command line)");
  // The flag's storage must outlive parsing: the callback holds it.
  sub->callback([&commands, json_flag] {
    commands.action = [] {
      const std::string input{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
      json in;
      try {
        in = json::parse(input);
      } catch (const json::parse_error& e) {
        throw core::FatalError(std::string("stdin: not JSON: ") + e.what());
      }
      json out;
      if (in.is_array()) {
        out = json::array();
        for (std::size_t i = 0; i < in.size(); ++i) out.push_back(score_case(in[i], config::Site("stdin", "").index(i)));
      } else {
        out = score_case(in, config::Site("stdin", ""));
      }
      std::printf("%s\n", out.dump().c_str());
      return core::exit_code::ok;
    };
  });
}

void register_corpus(CLI::App& app, Commands& commands) {
  auto* sub = app.add_subcommand("corpus", "Generate recall corpora");
  sub->require_subcommand(1);
  auto* rb = sub->add_subcommand(
      "random-bodies",
      "Seed 001's incompressible corpus: Python functions whose body lines bind random identifiers to random "
      "literals; the same knobs always give the same bytes");
  rb->footer(
      "--confusable (beyond seed 001): families of functions whose names share a --prefix-len prefix and differ "
      "in their last --suffix-len characters, with near-duplicate bodies (each line differs from the family's "
      "base line with probability --mutate, in the last --literal-tail characters of its literal), shuffled "
      "through the file. Recall then needs a sharp lookup: K-cache noise can retrieve a sibling.");
  struct Opts {
    corpus::RandomBodiesOptions o;
    corpus::ConfusableOptions c;
    bool confusable = false;
    std::string out;
  };
  auto opts = std::make_shared<Opts>();
  rb->add_option("--functions", opts->o.functions, "Number of functions")->capture_default_str();
  rb->add_option("--value-len", opts->o.value_len, "Characters in each string literal")->capture_default_str();
  rb->add_option("--seed", opts->o.seed, "Seed of the generator")->capture_default_str();
  rb->add_option("--min-lines", opts->o.min_lines, "Fewest assignment lines in a body")->capture_default_str();
  rb->add_option("--max-lines", opts->o.max_lines, "Most assignment lines in a body")->capture_default_str();
  rb->add_flag("--confusable", opts->confusable, "Families of near-identical functions (see below)");
  rb->add_option("--family-size", opts->c.family_size, "--confusable: functions per family")->capture_default_str();
  rb->add_option("--prefix-len", opts->c.prefix_len, "--confusable: shared name prefix length")->capture_default_str();
  rb->add_option("--suffix-len", opts->c.suffix_len, "--confusable: distinguishing name suffix length")
      ->capture_default_str();
  rb->add_option("--mutate", opts->c.mutate, "--confusable: probability a line differs from its family's")
      ->capture_default_str();
  rb->add_option("--literal-tail", opts->c.literal_tail, "--confusable: trailing literal characters that differ")
      ->capture_default_str();
  rb->add_option("-o,--output", opts->out, "Write here instead of stdout");
  rb->callback([&commands, opts] {
    commands.action = [opts] {
      corpus::RandomBodiesOptions o = opts->o;
      if (opts->confusable) o.confusable = opts->c;
      if (const std::string problem = corpus::check_random_bodies(o); !problem.empty()) {
        throw core::FatalError("corpus random-bodies: " + problem);
      }
      const std::string text = corpus::generate_random_bodies(o);
      const std::size_t tokens = corpus::estimate_spm_tokens(text);
      if (opts->out.empty()) {
        std::fwrite(text.data(), 1, text.size(), stdout);
        std::fflush(stdout);  // the corpus whole before the note, when both go to one terminal or pipe
        std::fprintf(stderr, "%zu bytes, %d functions, ~%zu tokens (llama SPM estimate; run --dry-run counts with the "
                     "model's tokenizer)\n", text.size(), o.functions, tokens);
      } else {
        std::ofstream f(opts->out, std::ios::binary);
        f << text;
        f.close();
        if (!f) throw core::FatalError("cannot write " + opts->out);
        std::fprintf(stderr, "wrote %s: %zu bytes, %d functions, ~%zu tokens (llama SPM estimate), sha256 %s\n",
                     opts->out.c_str(), text.size(), o.functions, tokens, core::sha256_hex(text).c_str());
      }
      return core::exit_code::ok;
    };
  });
}

}  // namespace

void register_recall_tools(CLI::App& app, Commands& commands) {
  register_corpus(app, commands);
  register_extract(app, commands);
  register_sample(app, commands);
  register_score(app, commands);
}

}  // namespace kvsweep::cli

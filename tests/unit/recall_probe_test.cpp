#include "kvsweep/probe/recall/recall.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kvsweep/corpus/sample.hpp"
#include "kvsweep/score/recall_score.hpp"
#include "fake_api.hpp"
#include "metric_declarations.hpp"

using ::testing::HasSubstr;
using ::testing::Not;

namespace kvsweep::probe {
namespace {

using nlohmann::json;

/// How the fake server tokenizes.
enum class Tokenizer {
  quarters,  // one token per 4 bytes, rounded up: enough to exercise the preflight arithmetic
  bytes,     // one token per byte (BOS 1 first when add_special)
  glued,     // byte tokens, but a byte and the newline after it are one token
  none,      // no tokenizer (ErrorKind::unsupported)
};

/// A server that answers every completion with `answer` (streamed a few bytes at a time, as a
/// server would, when the request says when to stop) and tokenizes as `tokenizer` says.
struct AnswerServer {
  std::string answer;
  std::string stop_type = "eos";
  Tokenizer tokenizer = Tokenizer::quarters;
  kvsweep::testing::FakeApi api;

  AnswerServer() {
    api.on_complete = [this](const server::CompletionRequest& request, int) { return complete(request); };
    api.on_tokenize = [this](const std::string& text, bool add_special) { return tokenize(text, add_special); };
  }
  AnswerServer(const AnswerServer&) = delete;  // the api's scripts point at this one
  AnswerServer& operator=(const AnswerServer&) = delete;

  core::Expected<server::CompletionResponse> complete(const server::CompletionRequest& request) const {
    server::CompletionResponse r;
    r.stop_type = stop_type;
    if (request.stop_when) {
      for (std::size_t i = 0; i < answer.size(); i += 5) {
        r.content = answer.substr(0, i + 5);
        if (request.stop_when(r.content)) {
          r.stop_type = "cancel";
          break;
        }
      }
    } else {
      r.content = answer;
    }
    r.timings.prompt_n = 11;
    r.timings.predicted_n = 7;
    return r;
  }
  core::Expected<std::vector<std::int32_t>> tokenize(const std::string& text, bool add_special) const {
    if (tokenizer == Tokenizer::none) return core::fail(core::ErrorKind::unsupported, "no tokenizer");
    if (tokenizer == Tokenizer::bytes || tokenizer == Tokenizer::glued) {
      std::vector<std::int32_t> ids(add_special ? 1 : 0, 1);
      for (std::size_t i = 0; i < text.size(); ++i) {
        const bool glued =
            tokenizer == Tokenizer::glued && text[i] != '\n' && i + 1 < text.size() && text[i + 1] == '\n';
        ids.push_back(static_cast<unsigned char>(text[i]) + (glued ? 256 : 0));
        i += glued ? 1 : 0;
      }
      return ids;
    }
    return std::vector<std::int32_t>((text.size() + 3) / 4, 1);
  }
};

const ConfigSource k_site{{"sweep.json", "probes[1]"}, {}};

json random_config() {
  return json{{"kind", "recall"},
              {"corpus", {{"random_bodies", {{"functions", 30}, {"value_len", 12}, {"seed", 5}}}}},
              {"k", 4}};
}

std::string joined(const std::vector<std::string>& lines, std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n && i < lines.size(); ++i) s += lines[i] + "\n";
  return s;
}

CellInfo make_cell(const std::string& type, int n_ctx) {
  CellInfo cell;
  cell.model = "tiny";
  cell.type_k = type;
  cell.type_v = type;
  cell.n_ctx = n_ctx;
  return cell;
}

std::string error_of(const json& config) {
  try {
    make_recall_probe(config, k_site);
  } catch (const core::FatalError& e) {
    return e.message;
  }
  return "(no error)";
}

TEST(RecallConfig, DefaultsFollowCodeneedle) {
  const RecallConfig c = parse_recall_config(random_config(), k_site);
  EXPECT_EQ(c.name, "recall");
  EXPECT_EQ(c.sample_size, 4);
  EXPECT_EQ(c.seed, 42);
  EXPECT_EQ(c.lines, 20);
  EXPECT_EQ(c.bonus_lines, 40);
  EXPECT_EQ(c.pass_lines, 8);
  EXPECT_FALSE(c.relax_indent);
  EXPECT_EQ(c.align, score::Alignment::difflib);
  EXPECT_EQ(c.mode, RecallMode::chat);
  EXPECT_EQ(c.max_tokens, 6000);
  EXPECT_TRUE(c.prefill_no_think);
  EXPECT_TRUE(c.bounded);
  EXPECT_EQ(c.budget_factor, 1.25);
  EXPECT_EQ(c.budget_plus, 32);
  EXPECT_EQ(c.stop_extra_lines, 10);
  ASSERT_TRUE(c.random_bodies.has_value());
  EXPECT_EQ(c.random_bodies->functions, 30);
  EXPECT_EQ(c.random_bodies->value_len, 12);
  EXPECT_EQ(c.random_bodies->seed, 5u);
}

TEST(RecallConfig, SampleSizeAlsoTakesItsOlderNameK) {
  json cfg = random_config();
  cfg.erase("k");
  cfg["sample_size"] = 7;
  EXPECT_EQ(parse_recall_config(cfg, k_site).sample_size, 7);
  cfg["sample_size"] = 0;
  EXPECT_EQ(error_of(cfg), "sweep.json: probes[1].sample_size: must be between 1 and 100000, got 0");
  cfg["k"] = 3;
  EXPECT_EQ(error_of(cfg), "sweep.json: probes[1]: give one of \"sample_size\" and \"k\" (its older name), not both");
}

TEST(RecallConfig, PassLinesAsARatioRoundsUp) {
  json cfg = random_config();
  cfg["pass_lines"] = 0.4;
  EXPECT_EQ(parse_recall_config(cfg, k_site).pass_lines, 8);
  cfg["pass_lines"] = 0.41;
  EXPECT_EQ(parse_recall_config(cfg, k_site).pass_lines, 9);
  cfg["pass_lines"] = 21;
  EXPECT_EQ(error_of(cfg), "sweep.json: probes[1].pass_lines: must be between 0 and 20, got 21");
}

TEST(RecallConfig, UnknownKeysNameTheSiteAndSuggest) {
  json cfg = random_config();
  cfg["bonus_line"] = 10;
  EXPECT_EQ(error_of(cfg), "sweep.json: probes[1]: unknown key 'bonus_line' (did you mean 'bonus_lines'?)");

  cfg = random_config();
  cfg["corpus"] = {{"file", json::array({"a.py"})}};
  EXPECT_EQ(error_of(cfg), "sweep.json: probes[1].corpus: unknown key 'file' (did you mean 'files'?)");

  cfg = random_config();
  cfg["corpus"]["random_bodies"]["valuelen"] = 3;
  EXPECT_EQ(error_of(cfg),
            "sweep.json: probes[1].corpus.random_bodies: unknown key 'valuelen' (did you mean 'value_len'?)");
}

TEST(RecallConfig, BadValuesSayWhatIsWrong) {
  json cfg = random_config();
  cfg["align"] = "difflb";
  EXPECT_EQ(error_of(cfg), "sweep.json: probes[1].align: unknown value 'difflb' (did you mean 'difflib'?)");
  cfg = random_config();
  cfg["mode"] = 3;
  EXPECT_EQ(error_of(cfg), "sweep.json: probes[1].mode: expected a string, got number 3");
  cfg = random_config();
  cfg["k"] = 0;
  EXPECT_EQ(error_of(cfg), "sweep.json: probes[1].k: must be between 1 and 100000, got 0");
  cfg = random_config();
  cfg.erase("corpus");
  EXPECT_THAT(error_of(cfg), HasSubstr("sweep.json: probes[1].corpus: missing"));
  cfg = random_config();
  cfg["corpus"]["files"] = json::array({"a.py"});
  EXPECT_EQ(error_of(cfg), "sweep.json: probes[1].corpus: give exactly one of \"files\" and \"random_bodies\"");
  cfg = random_config();
  cfg["corpus"] = {{"files", json::array({"notes.txt"})}};
  EXPECT_THAT(error_of(cfg),
              HasSubstr("sweep.json: probes[1].corpus.files[0]: notes.txt: unsupported file type '.txt'"));
  cfg = random_config();
  cfg["corpus"] = {{"files", json::array({"missing-file.py"})}};
  EXPECT_THAT(error_of(cfg), HasSubstr("sweep.json: probes[1].corpus.files: missing-file.py: cannot read"));
}

TEST(RecallTaskText, BraceLanguagesAnchorOnTheOpeningBracePythonOnTheDef) {
  corpus::Target php;
  php.name = "render";
  php.file = "View.php";
  php.language = corpus::Language::php;
  const std::string text = recall_task_text(php, 20, true);
  EXPECT_THAT(text, HasSubstr("function named `render` in file `View.php`")) << text;
  EXPECT_THAT(text, HasSubstr("start right after the line with the opening brace `{` of `render`"))
      << text;
  EXPECT_THAT(text, Not(HasSubstr("def "))) << text;
  corpus::Target py = php;
  py.language = corpus::Language::python;
  EXPECT_THAT(recall_task_text(py, 20, false), HasSubstr("`def render(...):` signature"));
  EXPECT_THAT(recall_task_text(py, 20, false), Not(HasSubstr("opening brace")));
}

TEST(RecallProbe, ItemsAreTheCodeneedleSample) {
  auto probe = make_recall_probe(random_config(), k_site);
  auto& recall = dynamic_cast<RecallProbe&>(*probe);
  EXPECT_EQ(recall.kind(), "recall");
  EXPECT_EQ(recall.corpus().targets.size(), 30u);
  const auto expected =
      corpus::stratified_sample(recall.corpus().targets, recall.corpus().total_lines, 4, 42);
  const auto items = recall.items();
  ASSERT_EQ(items.size(), 4u);
  for (std::size_t i = 0; i < items.size(); ++i) {
    EXPECT_EQ(items[i].key, expected[i].name);
    EXPECT_EQ(items[i].spec["name"], expected[i].name);
    EXPECT_EQ(items[i].spec["file"], "random-bodies.py");
    EXPECT_EQ(items[i].spec["start_line"], expected[i].start_line);
    EXPECT_EQ(items[i].spec["body_start_line"], expected[i].start_line + 1);
  }
  EXPECT_EQ(recall.items()[0].key, items[0].key);  // stable across calls
}

TEST(RecallProbe, ChatRequestPutsTheCorpusFirstAndPrefillsAnEmptyThinkBlock) {
  auto probe = make_recall_probe(random_config(), k_site);
  auto& recall = dynamic_cast<RecallProbe&>(*probe);
  const corpus::Target& target = recall.sampled().front();
  const server::CompletionRequest r = recall.request_for(target);
  ASSERT_EQ(r.messages.size(), 2u);
  EXPECT_EQ(r.messages[0].role, "user");
  const std::string& prompt = r.messages[0].content;
  EXPECT_TRUE(prompt.starts_with(recall.corpus().text + "\n\n---\n\nTask: reproduce verbatim the first 20 lines"));
  EXPECT_THAT(prompt, HasSubstr("the function named `" + target.name + "`"));
  EXPECT_THAT(prompt, HasSubstr("`def " + target.name + "(`"));
  EXPECT_THAT(prompt, HasSubstr("markdown code fences"));
  EXPECT_THAT(prompt, HasSubstr("blank lines"));
  EXPECT_THAT(prompt, Not(HasSubstr(" in file `")));  // one file: no file qualifier
  EXPECT_EQ(r.messages[1].role, "assistant");
  EXPECT_EQ(r.messages[1].content, "<think>\n\n</think>\n\n");
  EXPECT_EQ(r.n_predict, 6000);
  EXPECT_FALSE(r.stop_when);
  EXPECT_EQ(r.temperature, 0.0);
  EXPECT_EQ(r.top_k, 40);
  EXPECT_EQ(r.top_p, 1.0);
  EXPECT_EQ(r.min_p, 0.0);
  EXPECT_EQ(r.seed, 42u);
  EXPECT_TRUE(r.cache_prompt);
  EXPECT_TRUE(r.prompt.empty());
}

TEST(RecallProbe, RawModeSendsThePromptAsIs) {
  json cfg = random_config();
  cfg["mode"] = "raw";
  cfg["prefill_no_think"] = false;
  cfg["max_tokens"] = 99;
  auto probe = make_recall_probe(cfg, k_site);
  auto& recall = dynamic_cast<RecallProbe&>(*probe);
  const corpus::Target& target = recall.sampled().front();
  const server::CompletionRequest r = recall.request_for(target);
  EXPECT_TRUE(r.messages.empty());
  EXPECT_EQ(r.prompt, recall_prompt(recall.corpus(), target, 20));
  EXPECT_EQ(r.n_predict, 99);
}

TEST(RecallProbe, SignatureCueEndsTheRawPromptOrTheChatPrefillWithTheTargetsSignature) {
  // A multi-line signature: the cue is every line from `def` to the line before the body.
  const std::string source =
      "import os\n\n\ndef long_signature(a,\n                   b):\n" + [] {
        std::string body;
        for (int i = 0; i < 20; ++i) body += "    x" + std::to_string(i) + " = " + std::to_string(i) + "\n";
        return body;
      }();
  const std::vector<corpus::SourceFile> files{{"m.py", source}};
  auto built = corpus::build_corpus(files, 20);
  ASSERT_TRUE(built) << built.error().message;
  ASSERT_EQ(built->targets.size(), 1u);
  EXPECT_EQ(signature_text(*built, built->targets[0]), "def long_signature(a,\n                   b):");

  json cfg = random_config();
  cfg["cue"] = "signature";
  cfg["mode"] = "raw";
  auto probe = make_recall_probe(cfg, k_site);
  auto& recall = dynamic_cast<RecallProbe&>(*probe);
  const corpus::Target& target = recall.sampled().front();
  const std::string sig = "def " + target.name + "():";
  EXPECT_EQ(signature_text(recall.corpus(), target), sig);
  const server::CompletionRequest raw = recall.request_for(target);
  EXPECT_EQ(raw.prompt, recall_prompt(recall.corpus(), target, 20, RecallCue::signature) + sig + "\n");
  EXPECT_THAT(raw.prompt, HasSubstr("signature is repeated below"));

  cfg["mode"] = "chat";
  auto chat_probe = make_recall_probe(cfg, k_site);
  auto& chat = dynamic_cast<RecallProbe&>(*chat_probe);
  const server::CompletionRequest r = chat.request_for(chat.sampled().front());
  ASSERT_EQ(r.messages.size(), 2u);
  EXPECT_EQ(r.messages[1].role, "assistant");
  EXPECT_EQ(r.messages[1].content, "<think>\n\n</think>\n\n" + sig + "\n");

  cfg["cue"] = "sig";
  try {
    (void)make_recall_probe(cfg, k_site);
    FAIL() << "an unknown cue must be refused";
  } catch (const core::FatalError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("cue")) << e.what();
  }
}

TEST(RecallProbe, RawModeSendsTokenIdsThatEqualTheServersTokensOfThePrompt) {
  json cfg = random_config();
  cfg["mode"] = "raw";
  cfg["cue"] = "signature";
  auto probe = make_recall_probe(cfg, k_site);
  auto& recall = dynamic_cast<RecallProbe&>(*probe);
  AnswerServer fake;
  fake.tokenizer = Tokenizer::bytes;
  fake.answer = "x\n";
  const CellInfo cell = make_cell("f16", 1 << 20);
  Context ctx{fake.api, cell};
  for (std::size_t i = 0; i < 2; ++i) {
    ASSERT_TRUE(recall.run(recall.items()[i], ctx).has_value());
    const server::CompletionRequest& sent = fake.api.requests.back();
    EXPECT_TRUE(sent.prompt.empty());
    const std::string text = recall.request_for(recall.sampled()[i]).prompt;
    AnswerServer fresh;
    fresh.tokenizer = Tokenizer::bytes;
    EXPECT_EQ(sent.tokens, *fresh.tokenize(text, true)) << "item " << i;
  }
  // The corpus went to the tokenizer twice (its tokens, and the whole prompt's for the check), not per item.
  std::size_t long_texts = 0;
  for (const auto& [t, add_special] : fake.api.tokenized) long_texts += t.size() >= recall.corpus().text.size() - 1;
  EXPECT_EQ(long_texts, 2u);

  // A tokenizer whose ids of corpus and question apart differ from the whole text's: text.
  auto text_probe = make_recall_probe(cfg, k_site);
  auto& text_recall = dynamic_cast<RecallProbe&>(*text_probe);
  AnswerServer coarse;
  coarse.tokenizer = Tokenizer::glued;  // the corpus's last byte and its newline are one token: it straddles the split
  coarse.answer = "x\n";
  Context ctx2{coarse.api, cell};
  ASSERT_TRUE(text_recall.run(text_recall.items()[0], ctx2).has_value());
  EXPECT_TRUE(coarse.api.requests.back().tokens.empty());
  EXPECT_EQ(coarse.api.requests.back().prompt, text_recall.request_for(text_recall.sampled()[0]).prompt);
}

TEST(RecallProbe, RunScoresTheAnswer) {
  auto probe = make_recall_probe(random_config(), k_site);
  auto& recall = dynamic_cast<RecallProbe&>(*probe);
  const Item item = recall.items()[1];
  const corpus::Target& target = recall.sampled()[1];
  AnswerServer fake;
  const CellInfo cell = make_cell("f16", 0);
  Context ctx{fake.api, cell};

  // An echoed think block, the 20 primary lines, 2 bonus lines, then one made-up line.
  fake.answer = "<think>\n</think>\n" + joined(target.body, 22) + "    made_up = \"nothing\"\n";
  auto result = recall.run(item, ctx);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(result->metrics["primary_matched"], 20);
  EXPECT_EQ(result->metrics["bonus_matched"], 2);
  EXPECT_EQ(result->metrics["hallucinated"], 1);
  EXPECT_EQ(result->metrics["passed"], 1);
  EXPECT_EQ(result->metrics["produced_lines"], 23);
  EXPECT_EQ(result->metrics["cut"], 0);
  EXPECT_EQ(result->response["text"], fake.answer);
  EXPECT_TRUE(result->response["cut"].is_null());
  EXPECT_TRUE(result->response["corpus_tokens"].is_null());  // no preflight without n_ctx
  EXPECT_EQ(result->timings.prompt_n, 11);
  EXPECT_EQ(result->timings.predicted_n, 7);
  ASSERT_EQ(fake.api.requests.size(), 1u);
  EXPECT_THAT(fake.api.requests[0].messages[0].content, HasSubstr("`" + target.name + "`"));
  // n_ctx unknown: no preflight; only the expected answer (20 primary + 5 bonus lines here) is
  // tokenized, for the budget: 1.25 × tokens + 32.
  ASSERT_EQ(fake.api.tokenized.size(), 1u);
  EXPECT_EQ(fake.api.tokenized[0].first, joined(target.body, 60));
  const int expected_tokens = static_cast<int>((fake.api.tokenized[0].first.size() + 3) / 4);
  EXPECT_EQ(result->response["expected_tokens"], expected_tokens);
  EXPECT_EQ(result->response["budget"], static_cast<int>(1.25 * expected_tokens + 32));
  EXPECT_EQ(fake.api.requests[0].n_predict, static_cast<int>(1.25 * expected_tokens + 32));
  EXPECT_TRUE(fake.api.requests[0].stop_when);

  // Seven lines only: below pass_lines; stopped at the token limit.
  fake.answer = joined(target.body, 7);
  fake.stop_type = "limit";
  result = recall.run(item, ctx);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->metrics["primary_matched"], 7);
  EXPECT_EQ(result->metrics["passed"], 0);
  EXPECT_EQ(result->metrics["hallucinated"], 0);
  EXPECT_EQ(result->metrics["cut"], 1);
  EXPECT_EQ(result->response["cut"], "budget");

  // Fenced answer with relaxed indentation.
  json relaxed = random_config();
  relaxed["relax_indent"] = true;
  auto probe2 = make_recall_probe(relaxed, k_site);
  std::string flat = "```python\n";
  for (std::size_t i = 0; i < 20; ++i) flat += target.body[i].substr(4) + "\n";
  flat += "```\n";
  fake.answer = flat;
  result = probe2->run(item, ctx);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->metrics["primary_matched"], 20);
  EXPECT_EQ(result->metrics["hallucinated"], 0);
}

TEST(RecallProbe, UnknownItemIsAnError) {
  auto probe = make_recall_probe(random_config(), k_site);
  AnswerServer fake;
  CellInfo cell;
  Context ctx{fake.api, cell};
  auto result = probe->run(Item{"no_such_function", {}}, ctx);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, core::ErrorKind::invalid);
  EXPECT_TRUE(fake.api.requests.empty());
}

TEST(RecallProbe, PreflightFailsBeforeGeneratingWhenTheContextIsTooSmall) {
  auto probe = make_recall_probe(random_config(), k_site);
  auto& recall = dynamic_cast<RecallProbe&>(*probe);
  AnswerServer fake;
  fake.answer = "x";
  const int corpus_tokens = static_cast<int>((recall.corpus().text.size() + 3) / 4);
  const CellInfo small = make_cell("q8_0", corpus_tokens + 100);
  Context ctx{fake.api, small};
  auto result = recall.run(recall.items()[0], ctx);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, core::ErrorKind::exceeds_context);
  EXPECT_THAT(result.error().message, HasSubstr("raise the server's -c"));
  EXPECT_TRUE(fake.api.requests.empty());

  // Big enough: the corpus is tokenized once per model (the first cell did), the question per item.
  const CellInfo big = make_cell("q4_0", corpus_tokens + 2000);
  Context ctx2{fake.api, big};
  fake.api.tokenized.clear();
  const auto first = recall.run(recall.items()[0], ctx2);
  ASSERT_TRUE(first.has_value());
  // The counts go into the record; the corpus is counted without its trailing newline (which
  // goes with the question: see SharedPrefix).
  const std::string& text = recall.corpus().text;
  const std::size_t head = text.find_last_not_of('\n') + 1;
  EXPECT_EQ(first->response["corpus_tokens"], static_cast<int>((head + 3) / 4));
  EXPECT_GT(first->response["question_tokens"].get<int>(), 20);
  ASSERT_TRUE(recall.run(recall.items()[1], ctx2).has_value());
  EXPECT_EQ(fake.api.requests.size(), 2u);
  // Per item the expected answer (for the budget) and the question; the corpus not again.
  ASSERT_EQ(fake.api.tokenized.size(), 4u);
  for (const auto& [t, add_special] : fake.api.tokenized) EXPECT_LT(t.size(), head);

  // A backend without a tokenizer: the preflight is skipped, the question still asked.
  AnswerServer no_tokenizer;
  no_tokenizer.tokenizer = Tokenizer::none;
  Context ctx3{no_tokenizer.api, small};
  EXPECT_TRUE(recall.run(recall.items()[0], ctx3).has_value());
}

TEST(RecallProbe, MetricsAndMinContext) {
  json cfg = random_config();
  cfg["bounded"] = false;
  cfg["max_tokens"] = 512;
  auto probe = make_recall_probe(cfg, k_site);
  const auto metrics = probe->metrics();
  ASSERT_EQ(metrics.size(), 6u);
  EXPECT_EQ(metrics[0].name, "primary_matched");
  EXPECT_TRUE(metrics[0].higher_is_better());
  EXPECT_EQ(metrics[2].name, "hallucinated");
  EXPECT_FALSE(metrics[2].higher_is_better());
  EXPECT_EQ(metrics[3].name, "passed");
  const auto& recall = dynamic_cast<const RecallProbe&>(*probe);
  const auto bytes = static_cast<int>(recall.corpus().text.size());
  EXPECT_EQ(probe->min_context(), bytes * 3 / 4 + 512 + 256);
}

TEST(RecallProbe, FilesResolveAgainstTheConfigDirectory) {
  const auto dir = std::filesystem::temp_directory_path() / "kvsweep_recall_probe_test";
  std::filesystem::create_directories(dir / "src");
  for (const char* name : {"a.py", "b.py"}) {
    std::ofstream out(dir / "src" / name, std::ios::binary);
    for (int f = 0; f < 3; ++f) {
      out << "def " << name[0] << "_fn" << f << "():\n";
      for (int i = 0; i < 25; ++i) out << "    v" << i << " = " << i * f << "\n";
      out << "\n\n";
    }
  }
  const json cfg{{"kind", "recall"},
                 {"name", "two-files"},
                 {"corpus", {{"files", json::array({"src/a.py", "src/b.py"})}}},
                 {"k", 2},
                 {"lines", 20},
                 {"bounded", false},
                 {"max_tokens", 512}};
  const ConfigSource site{{"dir/sweep.json", "probes[0]"}, dir};
  auto probe = make_recall_probe(cfg, site);
  auto& recall = dynamic_cast<RecallProbe&>(*probe);
  EXPECT_EQ(recall.name(), "two-files");
  EXPECT_EQ(recall.corpus().targets.size(), 6u);
  EXPECT_TRUE(recall.corpus().text.starts_with("# ====== src/a.py ======\ndef a_fn0():\n"));
  const auto r = recall.request_for(recall.sampled().front());
  EXPECT_THAT(r.messages[0].content, HasSubstr(" in file `" + recall.sampled().front().file + "`"));
  EXPECT_EQ(probe->min_context(), static_cast<int>(recall.corpus().text.size()) / 3 + 512 + 256);

  // A glob pattern expands to its matches in sorted order, shown relative to the config.
  json globbed = cfg;
  globbed["corpus"]["files"] = json::array({"src/*.py"});
  auto probe2 = make_recall_probe(globbed, site);
  const auto& recall2 = dynamic_cast<const RecallProbe&>(*probe2);
  EXPECT_EQ(recall2.corpus().files, (std::vector<std::string>{"src/a.py", "src/b.py"}));
  EXPECT_EQ(recall2.corpus().text, recall.corpus().text);
  globbed["corpus"]["files"] = json::array({"src/*.js"});
  try {
    make_recall_probe(globbed, site);
    ADD_FAILURE() << "a pattern matching nothing must fail";
  } catch (const core::FatalError& e) {
    EXPECT_THAT(e.message, HasSubstr("probes[0].corpus.files[0]: pattern 'src/*.js' matches no file"))
        << e.message;
  }
  std::filesystem::remove_all(dir);
}

TEST(RecallProbe, BoundedAnswerIsCancelledOnceItHasEnoughLines) {
  auto probe = make_recall_probe(random_config(), k_site);
  auto& recall = dynamic_cast<RecallProbe&>(*probe);
  const corpus::Target& target = recall.sampled()[0];
  AnswerServer fake;
  const CellInfo cell = make_cell("q4_0", 0);
  Context ctx{fake.api, cell};
  // A model that does not stop: the whole function, then the rest of the corpus.
  fake.answer = "<think>\n</think>\n" + joined(target.body, target.body.size()) + recall.corpus().text;
  auto result = recall.run(recall.items()[0], ctx);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(result->response["cut"], "lines");
  EXPECT_EQ(result->metrics["cut"], 1);
  EXPECT_EQ(result->metrics["primary_matched"], 20);
  const std::string text = result->response["text"];
  EXPECT_LT(text.size(), fake.answer.size() / 4);
  // Stopped at the first complete line past primary + bonus + 10 (echoed think lines excluded).
  const std::size_t expected_lines = std::min<std::size_t>(target.body.size(), 60) + 10;
  const std::size_t got = score::answer_lines(text.substr(0, text.rfind('\n') + 1), {}).size();
  EXPECT_GT(got, expected_lines);
  EXPECT_LE(got, expected_lines + 3);  // a piece may complete a line after blank ones

  // An answer that ends by itself is not cut.
  fake.answer = joined(target.body, 20);
  result = recall.run(recall.items()[0], ctx);
  ASSERT_TRUE(result.has_value());
  EXPECT_TRUE(result->response["cut"].is_null());
  EXPECT_EQ(result->response["text"], fake.answer);
}

TEST(RecallProbe, UnboundedAnswersUseMaxTokensOnly) {
  json cfg = random_config();
  cfg["bounded"] = false;
  cfg["max_tokens"] = 700;
  auto probe = make_recall_probe(cfg, k_site);
  AnswerServer fake;
  fake.answer = "x\n";
  const CellInfo cell = make_cell("f16", 0);
  Context ctx{fake.api, cell};
  auto result = probe->run(probe->items()[0], ctx);
  ASSERT_TRUE(result.has_value());
  ASSERT_EQ(fake.api.requests.size(), 1u);
  EXPECT_EQ(fake.api.requests[0].n_predict, 700);
  EXPECT_FALSE(fake.api.requests[0].stop_when);
  EXPECT_TRUE(fake.api.tokenized.empty());
  EXPECT_TRUE(result->response["expected_tokens"].is_null());

  // A backend that cannot tokenize gets max_tokens as the budget but still the line stop.
  AnswerServer no_tokenizer;
  no_tokenizer.tokenizer = Tokenizer::none;
  no_tokenizer.answer = "x\n";
  Context ctx2{no_tokenizer.api, cell};
  json bounded = random_config();
  bounded["max_tokens"] = 700;
  auto probe2 = make_recall_probe(bounded, k_site);
  ASSERT_TRUE(probe2->run(probe2->items()[0], ctx2).has_value());
  EXPECT_EQ(no_tokenizer.api.requests[0].n_predict, 700);
  EXPECT_TRUE(no_tokenizer.api.requests[0].stop_when);
}

TEST(RecallConfig, BudgetKnobsAreValidated) {
  json cfg = random_config();
  cfg["budget_factor"] = 0;
  EXPECT_THAT(error_of(cfg), HasSubstr("probes[1].budget_factor: expected a number > 0")) << error_of(cfg);
  cfg = random_config();
  cfg["stop_extra_lines"] = -1;
  EXPECT_THAT(error_of(cfg), HasSubstr("probes[1].stop_extra_lines")) << error_of(cfg);
  cfg = random_config();
  cfg["bounded"] = "yes";
  EXPECT_THAT(error_of(cfg), HasSubstr("probes[1].bounded")) << error_of(cfg);
}

TEST(RecallProbe, DeclaresExactlyTheMetricsItEmits) {
  auto probe = make_recall_probe(random_config(), k_site);
  auto& recall = dynamic_cast<RecallProbe&>(*probe);
  AnswerServer fake;
  const CellInfo cell = make_cell("f16", 0);
  Context ctx{fake.api, cell};
  fake.answer = joined(recall.sampled()[0].body, 20);
  auto result = recall.run(recall.items()[0], ctx);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  testing::expect_declarations_match(*probe, result->metrics);
  EXPECT_TRUE(probe->deterministic());
  const auto specs = probe->metrics();
  EXPECT_EQ(find_metric(specs, "passed")->kind, MetricKind::binary);
  EXPECT_EQ(find_metric(specs, "cut")->role, MetricRole::diagnostic);
  EXPECT_EQ(find_metric(specs, "produced_lines")->role, MetricRole::diagnostic);
  EXPECT_EQ(find_metric(specs, "hallucinated")->direction, Direction::lower_better);
}

}  // namespace
}  // namespace kvsweep::probe

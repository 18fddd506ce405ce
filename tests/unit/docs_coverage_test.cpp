// docs/ documents what the code accepts and emits: every key a sweep config or a probe takes (the
// lists the readers check against, got from their own "unknown key" message) and every metric the
// shipped configs' probes declare, each metric in one row of its probe's table.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvsweep/config/config.hpp"
#include "kvsweep/core/error.hpp"
#include "kvsweep/probe/probe.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kSource = fs::path(KVSWEEP_TEST_DATA) / ".." / "..";

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Every page under docs/, joined.
std::string docs_text() {
  std::vector<fs::path> pages;
  for (const auto& e : fs::directory_iterator(kSource / "docs"))
    if (e.path().extension() == ".md") pages.push_back(e.path());
  std::sort(pages.begin(), pages.end());
  std::string text;
  for (const auto& p : pages) text += read_text(p) + "\n";
  return text;
}

/// A key no accepted key is near, so the check lists them all instead of guessing one.
constexpr const char* kUnknown = "zqxjvwzqxjvwzqxjvw";

/// The keys a reader accepts, from its message for kUnknown: "unknown key '…' (one of: a, b, c)".
/// Empty when `read` did not fail that way (the caller asserts on it), with the message it gave.
std::vector<std::string> accepted_keys(const std::function<void()>& read) {
  try {
    read();
  } catch (const kvsweep::core::FatalError& e) {
    const std::string head = std::string("unknown key '") + kUnknown + "' (one of: ";
    const auto at = e.message.find(head);
    if (at == std::string::npos) {
      ADD_FAILURE() << "expected an unknown-key message listing the keys, got: " << e.message;
      return {};
    }
    const auto from = at + head.size();
    const auto to = e.message.find(')', from);
    std::vector<std::string> keys;
    std::stringstream list(e.message.substr(from, to - from));
    for (std::string key; std::getline(list, key, ',');) keys.push_back(key.substr(key.find_first_not_of(' ')));
    return keys;
  }
  return {};
}

/// A sweep config that reads, with `patch` merged in (RFC 7386: null removes a key).
json sweep_config(const json& patch) {
  json doc = {{"models", {{{"name", "m"}, {"path", "m.gguf"}}}},
              {"grid", {{"k", {"f16"}}, {"v", "same-as-k"}}},
              {"probes", {{{"kind", "complete"}, {"prompts", {"a"}}}}}};
  doc.merge_patch(patch);
  return doc;
}

std::vector<std::string> sweep_keys(const json& patch) {
  return accepted_keys([&] { kvsweep::config::from_json(sweep_config(patch), "sweep.json"); });
}

std::vector<std::string> probe_keys(const json& config) {
  return accepted_keys([&] { kvsweep::probe::make_probe(config, {{"sweep.json", "probes[0]"}, kSource}); });
}

bool mentions(const std::string& text, const std::string& quoted) { return text.find(quoted) != std::string::npos; }

TEST(DocsCoverage, EverySweepConfigKeyIsDocumented) {
  const std::string docs = docs_text();
  const json unknown = {{kUnknown, 1}};
  // Each section as the config names it, and what puts kUnknown into it.
  const std::map<std::string, json> sections = {
      {"", unknown},
      {"server", {{"server", unknown}}},
      {"server.ready", {{"server", {{"preset", "vllm"}, {"ready", unknown}}}}},
      {"server.confirm", {{"server", {{"preset", "vllm"}, {"confirm", unknown}}}}},
      {"server.openai", {{"server", {{"preset", "vllm"}, {"openai", unknown}}}}},
      {"models[]", {{"models", {{{"name", "m"}, {"path", "m.gguf"}, {kUnknown, 1}}}}}},
      {"grid", {{"grid", unknown}}},
      {"variants[]", {{"variants", {{{"name", "a"}, {kUnknown, 1}}}}}},
      {"embedder", {{"embedder", unknown}}},
      {"sweep", {{"sweep", unknown}}},
      {"sweep.adaptive", {{"sweep", {{"adaptive", unknown}}}}},
  };
  for (const auto& [section, patch] : sections) {
    const auto keys = sweep_keys(patch);
    EXPECT_FALSE(keys.empty()) << "no key list for section '" << section << "'";
    for (const auto& key : keys) {
      if (key == "$schema") continue;  // an editor's hint, read by no one
      const std::string qualified = section.empty() ? key : section + "." + key;
      EXPECT_TRUE(mentions(docs, "`" + key + "`") || mentions(docs, "`" + qualified + "`"))
          << "config key " << qualified << " is not documented in docs/";
    }
  }
}

/// The section of probes-and-metrics.md about `kind`: from its "## `kind`" heading to the next "## ".
std::string probe_section(const std::string& page, const std::string& kind) {
  const auto at = page.find("\n## `" + kind + "`");
  if (at == std::string::npos) return {};
  const auto end = page.find("\n## ", at + 1);
  return page.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

TEST(DocsCoverage, EveryProbeKeyIsDocumentedInItsKindsSection) {
  const std::string page = read_text(kSource / "docs" / "probes-and-metrics.md");
  const std::string preamble = page.substr(0, page.find("\n## "));
  for (const auto& kind : kvsweep::probe::probe_kinds()) {
    const std::string section = probe_section(page, kind);
    if (section.empty()) {
      ADD_FAILURE() << "docs/probes-and-metrics.md has no section \"## `" << kind << "`\"";
      continue;
    }
    const auto keys = probe_keys({{"kind", kind}, {kUnknown, 1}});
    EXPECT_FALSE(keys.empty()) << "no key list for probe kind " << kind;
    for (const auto& key : keys) {
      if (key == "kind" || key == "name") {
        EXPECT_TRUE(mentions(preamble, "`" + key + "`")) << "probe key " << key << " is not in the page's opening";
        continue;
      }
      EXPECT_TRUE(mentions(section, "`" + key + "`")) << "probe key " << kind << "." << key << " is not documented";
    }
  }
  // What every kind takes beside its own keys, and the generated corpus recall and kld share.
  EXPECT_TRUE(mentions(preamble, "`gate`"));
  const auto generator = probe_keys({{"kind", "recall"}, {"corpus", {{"random_bodies", {{kUnknown, 1}}}}}});
  ASSERT_FALSE(generator.empty());
  for (const auto& key : generator) EXPECT_TRUE(mentions(page, "`" + key + "`")) << "random_bodies." << key;
}

/// The metric table's rows, by probe kind: the backquoted names of each row's second column.
std::map<std::string, std::vector<std::string>> metric_rows(const std::string& page) {
  const auto kinds = kvsweep::probe::probe_kinds();
  std::map<std::string, std::vector<std::string>> rows;
  std::stringstream in(page);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, '|');) cells.push_back(cell);
    // "| kind | `a` ↑, `b` | meaning |" splits into "", " kind ", " `a` ↑, `b` ", " meaning ".
    if (cells.size() < 4) continue;
    const std::string kind = cells[1].substr(1, cells[1].size() - 2);
    if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) continue;
    const std::string& names = cells[2];
    for (std::size_t a = names.find('`'); a != std::string::npos;) {
      const std::size_t b = names.find('`', a + 1);
      if (b == std::string::npos) break;
      rows[kind].push_back(names.substr(a + 1, b - a - 1));
      a = names.find('`', b + 1);
    }
  }
  return rows;
}

/// toolcall's per-length copies (`all_correct_L2048`) are documented by their base name, longkl's
/// per-bin ones (`mean_kl_d4k`) as `mean_kl_<bin>`.
std::string base_metric(const std::string& kind, const std::string& name) {
  if (kind == "longkl" && name.rfind("mean_kl_d", 0) == 0) return "mean_kl_<bin>";
  const auto at = name.rfind("_L");
  if (kind != "toolcall" || at == std::string::npos || at + 2 == name.size()) return name;
  const bool digits = std::all_of(name.begin() + static_cast<std::ptrdiff_t>(at) + 2, name.end(),
                                  [](char c) { return c >= '0' && c <= '9'; });
  return digits ? name.substr(0, at) : name;
}

TEST(DocsCoverage, EveryDeclaredMetricHasOneRowOfItsProbesTable) {
  const auto rows = metric_rows(read_text(kSource / "docs" / "probes-and-metrics.md"));
  ASSERT_FALSE(rows.empty()) << "no metric table in docs/probes-and-metrics.md";
  std::map<std::string, std::set<std::string>> declared;
  for (const auto& e : fs::directory_iterator(kSource / "configs")) {
    if (e.path().extension() != ".json" && e.path().extension() != ".jsonc") continue;
    const kvsweep::config::Config config = kvsweep::config::load(e.path());
    for (std::size_t i = 0; i < config.probes.size(); ++i) {
      const auto probe = kvsweep::probe::make_probe(
          config.probes[i], {{e.path().string(), "probes[" + std::to_string(i) + "]"}, config.base_dir});
      for (const auto& spec : probe->metrics()) declared[probe->kind()].insert(base_metric(probe->kind(), spec.name));
    }
  }
  ASSERT_FALSE(declared.empty());
  for (const auto& [kind, names] : declared) {
    const auto row = rows.find(kind);
    ASSERT_NE(row, rows.end()) << "no metric row for probe kind " << kind;
    for (const auto& name : names)
      EXPECT_EQ(std::count(row->second.begin(), row->second.end(), name), 1)
          << kind << "." << name << " must be documented in exactly one row";
  }
  // And the table holds no metric the probes no longer declare.
  for (const auto& [kind, names] : rows) {
    if (!declared.contains(kind)) continue;  // a kind no shipped config runs
    for (const auto& name : names) EXPECT_TRUE(declared[kind].contains(name)) << kind << "." << name << " is not declared";
  }
}

}  // namespace

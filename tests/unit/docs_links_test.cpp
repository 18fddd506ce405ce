// The README and docs/ link into each other: every relative link names a file that exists and, when
// it names an anchor in a Markdown file, a heading of that file (GitHub's anchor of it).

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace fs = std::filesystem;

const fs::path kSource = fs::path(KVSWEEP_TEST_DATA) / ".." / "..";

/// The file's lines outside fenced code blocks (a ``` line opens or closes one).
std::vector<std::string> prose_lines(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::string> out;
  bool fenced = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("```", 0) == 0) {
      fenced = !fenced;
      continue;
    }
    if (!fenced) out.push_back(line);
  }
  return out;
}

/// GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens.
std::string anchor_of(const std::string& heading) {
  std::string out;
  for (unsigned char c : heading) {
    if (std::isalnum(c) || c == '_' || c == '-') out += static_cast<char>(std::tolower(c));
    else if (c == ' ') out += '-';
  }
  return out;
}

std::set<std::string> anchors(const fs::path& file) {
  std::set<std::string> out;
  for (const auto& line : prose_lines(file)) {
    const auto text = line.find_first_not_of('#');
    if (line.rfind('#', 0) == 0 && text != std::string::npos && line[text] == ' ') out.insert(anchor_of(line.substr(text + 1)));
  }
  return out;
}

TEST(DocsLinks, AnchorsAreGitHubs) {
  // Headings of docs/ and the anchors GitHub gives them.
  const std::pair<const char*, const char*> cases[] = {
      {"Commands, environment and exit codes", "commands-environment-and-exit-codes"},
      {"`recall` (seed 001, codeneedle-compatible)", "recall-seed-001-codeneedle-compatible"},
      {"recommend: the cheapest safe K/V setting", "recommend-the-cheapest-safe-kv-setting"}};
  for (const auto& [heading, anchor] : cases) EXPECT_EQ(anchor_of(heading), anchor) << heading;
}

TEST(DocsLinks, EveryRelativeLinkOfTheReadmeAndDocsResolves) {
  std::vector<fs::path> pages = {kSource / "README.md"};
  for (const auto& e : fs::directory_iterator(kSource / "docs"))
    if (e.path().extension() == ".md") pages.push_back(e.path());
  std::size_t checked = 0;
  for (const auto& page : pages) {
    for (const auto& line : prose_lines(page)) {
      for (auto at = line.find("]("); at != std::string::npos; at = line.find("](", at + 2)) {
        const auto end = line.find(')', at + 2);
        if (end == std::string::npos) break;
        const std::string link = line.substr(at + 2, end - at - 2);
        if (link.empty() || link.find("://") != std::string::npos || link.rfind("mailto:", 0) == 0) continue;
        const auto hash = link.find('#');
        const std::string path = link.substr(0, hash);
        const fs::path target = path.empty() ? page : (page.parent_path() / path).lexically_normal();
        ++checked;
        if (!fs::exists(target)) {
          ADD_FAILURE() << page.filename() << ": link " << link << ": no such file";
          continue;
        }
        if (hash == std::string::npos || target.extension() != ".md") continue;
        EXPECT_TRUE(anchors(target).contains(link.substr(hash + 1)))
            << page.filename() << ": link " << link << ": " << target.filename() << " has no such heading";
      }
    }
  }
  EXPECT_GT(checked, 20u);  // the README's links into docs/ at least
}

}  // namespace

#include "kvsweep/corpus/extract.hpp"

#include <algorithm>
#include <cctype>
#include <unordered_set>

#include "kvsweep/core/read_file.hpp"

namespace kvsweep::corpus {

std::string_view to_string(Language language) {
  switch (language) {
    case Language::python: return "python";
    case Language::javascript: return "javascript";
    case Language::php: return "php";
  }
  return "?";
}

core::Expected<Language> language_of(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext == ".py") return Language::python;
  if (ext == ".js" || ext == ".mjs" || ext == ".cjs") return Language::javascript;
  if (ext == ".php") return Language::php;
  return core::fail(core::ErrorKind::invalid,
                    path.string() + ": unsupported file type '" + ext + "' (supported: .py, .js, .mjs, .cjs, .php)");
}

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' || text[i] == '\r') {
      lines.emplace_back(text.substr(start, i - start));
      if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      start = i + 1;
    }
  }
  if (start < text.size()) lines.emplace_back(text.substr(start));
  return lines;
}

std::vector<Target> extract_source(std::string_view source, Language language, int min_body_lines) {
  switch (language) {
    case Language::python: return extract_python(source, min_body_lines);
    case Language::javascript: return extract_javascript(source, min_body_lines);
    case Language::php: return extract_php(source, min_body_lines);
  }
  return {};
}

core::Expected<Corpus> build_corpus(std::span<const SourceFile> files, int min_body_lines) {
  if (files.empty()) return core::fail(core::ErrorKind::invalid, "corpus: no files");
  Corpus corpus;
  auto first_language = language_of(files.front().path);
  if (!first_language) return std::unexpected(first_language.error());
  corpus.language = *first_language;
  for (const SourceFile& f : files) {
    auto language = language_of(f.path);
    if (!language) return std::unexpected(language.error());
    if (*language != corpus.language) {
      return core::fail(core::ErrorKind::invalid, "corpus: mixed languages: " + files.front().path + " is " +
                                                      std::string(to_string(corpus.language)) + ", " + f.path +
                                                      " is " + std::string(to_string(*language)));
    }
    corpus.files.push_back(f.path);
  }
  if (files.size() == 1) {
    corpus.text = files.front().text;
    corpus.targets = extract_source(corpus.text, corpus.language, min_body_lines);
    for (Target& t : corpus.targets) t.file = files.front().path;
  } else {
    const std::string marker = corpus.language == Language::python ? "#" : "//";
    std::unordered_set<std::string> seen;
    int line_offset = 0;
    for (const SourceFile& f : files) {
      const std::string header = marker + " ====== " + f.path + " ======\n";
      corpus.text += header;
      corpus.text += f.text;
      const bool ends_with_newline = !f.text.empty() && f.text.back() == '\n';
      if (!ends_with_newline) corpus.text += '\n';
      corpus.text += '\n';
      for (Target& t : extract_source(f.text, corpus.language, min_body_lines)) {
        // A name an earlier file already has would make the question ambiguous.
        if (!seen.insert(t.name).second) continue;
        t.file = f.path;
        t.start_line += line_offset + 1;
        t.body_start_line += line_offset + 1;
        corpus.targets.push_back(std::move(t));
      }
      line_offset += 1 + static_cast<int>(std::count(f.text.begin(), f.text.end(), '\n')) +
                     (ends_with_newline ? 0 : 1) + 1;
    }
  }
  corpus.total_lines = static_cast<int>(std::count(corpus.text.begin(), corpus.text.end(), '\n')) + 1;
  return corpus;
}

core::Expected<Corpus> load_corpus(std::span<const std::string> paths, const std::filesystem::path& base_dir,
                                   int min_body_lines) {
  std::vector<SourceFile> files;
  for (const std::string& p : paths) {
    std::filesystem::path full(p);
    if (full.is_relative() && !base_dir.empty()) full = base_dir / full;
    const std::optional<std::string> read = core::read_file(full, core::Links::follow);
    if (!read) return core::fail(core::ErrorKind::io, full.string() + ": cannot read");
    const std::string& raw = *read;
    // Universal newlines, as Python's Path.read_text gives the published harness.
    std::string text;
    text.reserve(raw.size());
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '\r') {
        text += '\n';
        if (i + 1 < raw.size() && raw[i + 1] == '\n') ++i;
      } else {
        text += raw[i];
      }
    }
    files.push_back(SourceFile{p, std::move(text)});
  }
  return build_corpus(files, min_body_lines);
}

}  // namespace kvsweep::corpus

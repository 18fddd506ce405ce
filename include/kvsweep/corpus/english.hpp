#pragma once
/// The kld probe's default corpus: about 2,400 words (3,000 SmolLM2 tokens) of plain English prose —
/// fourteen short pieces (a story, a recipe, a letter, explanations of the water cycle, sleep and a
/// bicycle …) written for kvsweep, under its licence, kept in data/kld/english.txt and built into the
/// binary. Natural text, unlike the random-bodies corpus: SmolLM2-135M reads it at perplexity ~23
/// (random bodies: 110–128), so most positions have a clear top token and "same top p" means
/// something.

#include <string_view>

namespace kvsweep::corpus {

std::string_view english_text();

}  // namespace kvsweep::corpus

#include <string>
#include <vector>

namespace kvsweep::corpus {

/// `text` cut into `parts` documents of about equal length, each cut at the first line end at or
/// after its share (so no line is split); fewer than `parts` when the text has too few lines.
/// Concatenated, the documents are `text`. kld scores each as an item of its own.
std::vector<std::string> split_documents(std::string_view text, std::size_t parts);

}  // namespace kvsweep::corpus

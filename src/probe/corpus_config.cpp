#include "kvsweep/probe/corpus_config.hpp"

#include "kvsweep/config/keys.hpp"
#include "kvsweep/core/error.hpp"
#include "kvsweep/core/host.hpp"
#include "kvsweep/corpus/english.hpp"
#include "kvsweep/probe/random_bodies_config.hpp"

namespace kvsweep::probe {

using nlohmann::json;

std::string CorpusConfig::text() const {
  if (input) return bytes;
  if (generated) return corpus::generate_random_bodies(*generated);
  return std::string(corpus::english_text());
}

json CorpusConfig::spec() const {
  if (generated) {
    const auto& g = *generated;
    return {{"random_bodies", {{"functions", g.functions}, {"value_len", g.value_len}, {"seed", g.seed}}}};
  }
  if (english()) return {{"builtin", "english"}, {"sha256", core::sha256_hex(corpus::english_text())}};
  return file.string();
}

CorpusConfig read_corpus_config(const json& cfg, const ConfigSource& site, const corpus::RandomBodiesOptions& generator,
                                CorpusDefault fallback) {
  const config::Site& s = site.site;
  CorpusConfig corpus;
  const json c = cfg.contains("corpus")                   ? cfg["corpus"]
                 : fallback == CorpusDefault::english ? json{{"builtin", "english"}}
                                                          : json{{"random_bodies", json::object()}};
  if (c.is_string()) {
    corpus.file = c.get<std::string>();
    if (corpus.file.is_relative()) corpus.file = site.base_dir / corpus.file;
    InputText read = read_input_file(corpus.file, "corpus", s.child("corpus"));
    corpus.input = std::move(read.file);
    corpus.bytes = std::move(read.bytes);
  } else if (c.is_object()) {
    const config::Site cs = s.child("corpus");
    config::check_keys(c, {"random_bodies", "builtin"}, cs);
    if (c.contains("builtin")) {
      if (c.size() != 1 || c["builtin"] != "english")
        cs.fail("expected {\"builtin\": \"english\"} (the built-in English text) or {\"random_bodies\": {…}}");
    } else {
      corpus.generated = read_random_bodies(c.contains("random_bodies") ? c["random_bodies"] : json::object(),
                                            cs.child("random_bodies"), generator);
    }
  } else {
    s.child("corpus").fail("expected a file name, {\"builtin\": \"english\"} or {\"random_bodies\": {…}}, got " + c.dump());
  }
  return corpus;
}

}  // namespace kvsweep::probe

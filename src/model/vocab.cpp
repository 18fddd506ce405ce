#include "kvsweep/model/vocab.hpp"

#include <cstdlib>
#include <utility>

namespace kvsweep::model {

std::filesystem::path default_vocab_path() {
  const std::filesystem::path file = "ggml-vocab-llama-spm.gguf";
  if (const char* src = std::getenv("KVSWEEP_LLAMA_SRC"); src != nullptr && *src != '\0') {
    return std::filesystem::path(src) / "models" / file;
  }
  std::filesystem::path cache;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    cache = xdg;
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    cache = std::filesystem::path(home) / ".cache";
  } else {
    cache = ".cache";
  }
  return cache / "kvsweep" / "llama.cpp-de3ff81" / "src" / "models" / file;
}

std::vector<KeyValue> llama_base_kvs(const std::string& name, std::uint64_t n_vocab, std::uint32_t context_length) {
  constexpr std::uint32_t file_type_mostly_f16 = 1;  // llama_ftype LLAMA_FTYPE_MOSTLY_F16
  return {
      {"general.architecture", Value::of_string("llama")},
      {"general.name", Value::of_string(name)},
      {"general.alignment", Value::of_u32(gguf_default_alignment)},
      {"general.file_type", Value::of_u32(file_type_mostly_f16)},
      {"llama.vocab_size", Value::of_u32(static_cast<std::uint32_t>(n_vocab))},
      {"llama.context_length", Value::of_u32(context_length)},
  };
}

core::Expected<Vocab> read_vocab(const std::filesystem::path& path) {
  auto file = read_gguf(path);
  if (!file) {
    return core::fail(file.error().kind, "vocab: " + file.error().message +
                                             " (set KVSWEEP_LLAMA_SRC or pass the path of ggml-vocab-llama-spm.gguf)");
  }
  const Value* tokens = file->find("tokenizer.ggml.tokens");
  const auto* token_array = tokens != nullptr ? std::get_if<Array>(&tokens->data) : nullptr;
  if (token_array == nullptr || token_array->type != ValueType::string || token_array->items.empty()) {
    return core::fail(core::ErrorKind::parse,
                      path.string() + ": tokenizer.ggml.tokens is missing or not an array of strings");
  }
  Vocab vocab;
  vocab.n_vocab = token_array->items.size();
  for (KeyValue& kv : file->kvs) {
    if (kv.key.starts_with("tokenizer.")) vocab.tokenizer_kvs.push_back(std::move(kv));
  }
  return vocab;
}

}  // namespace kvsweep::model

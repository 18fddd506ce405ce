#pragma once
/// POST /v1/embeddings, as llama-server and the OpenAI API servers both answer it: the one
/// embed() request of LlamaApi and OpenAiApi.

#include <string>
#include <vector>

#include "kvsweep/core/error.hpp"
#include "kvsweep/http/client.hpp"

namespace kvsweep::server {

/// {model, input, encoding_format: "float"} (no "model" when `model` is empty: llama-server serves
/// one); the answer's `data[]` placed by each entry's `index`. An index outside `inputs` or a
/// missing field is ErrorKind::parse.
core::Expected<std::vector<std::vector<float>>> v1_embeddings(http::Client& client, const std::vector<std::string>& inputs,
                                                               const std::string& model);

}  // namespace kvsweep::server

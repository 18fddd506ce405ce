#pragma once
/// The {"random_bodies": {…}} corpus of a probe config (recall, kld): the generator's knobs read,
/// range-checked and checked together (corpus::check_random_bodies), failing with file and key.
///
/// Keys: functions, value_len, seed, min_lines, max_lines, confusable (true/false or
/// {family_size, prefix_len, suffix_len, mutate, literal_tail}); a key left out keeps `defaults`.

#include <nlohmann/json.hpp>

#include "kvsweep/config/keys.hpp"
#include "kvsweep/corpus/random_bodies.hpp"

namespace kvsweep::probe {

corpus::RandomBodiesOptions read_random_bodies(const nlohmann::json& obj, const config::Site& site,
                                               corpus::RandomBodiesOptions defaults = {});

}  // namespace kvsweep::probe

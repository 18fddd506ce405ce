/// read_random_bodies: a probe config's {"random_bodies": {…}} corpus read and checked.

#include "kvsweep/probe/random_bodies_config.hpp"

#include <algorithm>

namespace kvsweep::probe {

namespace {

const std::vector<std::string> k_random_keys = {"functions", "value_len", "seed", "min_lines", "max_lines",
                                                "confusable"};
const std::vector<std::string> k_confusable_keys = {"family_size", "prefix_len", "suffix_len", "mutate",
                                                    "literal_tail"};

int in_range(const nlohmann::json& obj, const std::string& key, long long fallback, long long lo, long long hi,
             const config::Site& site) {
  return static_cast<int>(config::get_int_in(obj, key, fallback, lo, hi, site));
}

}  // namespace

corpus::RandomBodiesOptions read_random_bodies(const nlohmann::json& obj, const config::Site& site,
                                               corpus::RandomBodiesOptions defaults) {
  config::check_keys(obj, k_random_keys, site);
  corpus::RandomBodiesOptions o = defaults;
  o.functions = in_range(obj, "functions", o.functions, 1, 1'000'000, site);
  o.value_len = in_range(obj, "value_len", o.value_len, 1, 100'000, site);
  const long long seed = config::get_int(obj, "seed", static_cast<long long>(o.seed), site);
  if (seed < 0) site.child("seed").fail("must not be negative, got " + std::to_string(seed));
  o.seed = static_cast<std::uint64_t>(seed);
  o.min_lines = in_range(obj, "min_lines", o.min_lines, 1, 100'000, site);
  o.max_lines = in_range(obj, "max_lines", std::max(o.max_lines, o.min_lines), o.min_lines, 100'000, site);
  if (obj.contains("confusable")) {
    const auto& c = obj["confusable"];
    const config::Site csite = site.child("confusable");
    if (c.is_boolean()) {
      if (c.get<bool>()) o.confusable = corpus::ConfusableOptions{};
    } else if (c.is_object()) {
      config::check_keys(c, k_confusable_keys, csite);
      corpus::ConfusableOptions co;
      co.family_size = static_cast<int>(config::get_int(c, "family_size", co.family_size, csite));
      co.prefix_len = static_cast<int>(config::get_int(c, "prefix_len", co.prefix_len, csite));
      co.suffix_len = static_cast<int>(config::get_int(c, "suffix_len", co.suffix_len, csite));
      co.literal_tail = static_cast<int>(config::get_int(c, "literal_tail", co.literal_tail, csite));
      co.mutate = config::get_number(c, "mutate", co.mutate, csite);  // range: check_random_bodies
      o.confusable = co;
    } else {
      csite.fail("expected true/false or an object of knobs, got " + c.dump());
    }
  }
  if (const std::string problem = corpus::check_random_bodies(o); !problem.empty()) site.fail(problem);
  return o;
}

}  // namespace kvsweep::probe

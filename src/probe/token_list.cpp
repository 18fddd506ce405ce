#include "kvsweep/probe/token_list.hpp"

#include <algorithm>
#include <string>

namespace kvsweep::probe {

std::vector<int> get_token_list(const nlohmann::json& cfg, const config::Site& s, const TokenList& list) {
  if (!cfg.contains(list.key)) return list.fallback;
  const config::Site site = s.child(list.key);
  const nlohmann::json& v = cfg[list.key];
  if (!v.is_array() || v.empty())
    site.fail(std::string("expected a non-empty list of ") + list.what + " in tokens, e.g. " + list.example);
  std::vector<int> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_number_integer()) site.index(i).fail("expected an integer number of tokens, got " + config::shown(v[i]));
    const long long n = v[i].get<long long>();
    if (n < list.min || n > list.max)
      site.index(i).fail("expected " + std::to_string(list.min) + " … " + std::to_string(list.max) + " tokens, got " +
                         std::to_string(n));
    if (std::find(out.begin(), out.end(), static_cast<int>(n)) != out.end())
      site.index(i).fail(std::to_string(n) + " is listed twice");
    out.push_back(static_cast<int>(n));
  }
  return out;
}

}  // namespace kvsweep::probe

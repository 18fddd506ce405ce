#include "kvsweep/config/slot_env.hpp"

#include <algorithm>
#include <cctype>

namespace kvsweep::config {

namespace {

constexpr std::string_view kPlaceholder = "{slot}";

bool valid_name(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

}  // namespace

core::Expected<SlotEnv> make_slot_env(std::string name, std::string value_template) {
  if (!valid_name(name))
    return core::fail(core::ErrorKind::invalid, "'" + name + "' is not an environment variable name (letters, digits "
                                                "and _, not starting with a digit)");
  // Braces only as the one placeholder: a typo such as {slots} or {SLOT} must not reach the
  // server verbatim and pin every cell to the same device.
  for (std::size_t pos = 0; pos < value_template.size(); ++pos) {
    char c = value_template[pos];
    if (c == '{') {
      if (value_template.compare(pos, kPlaceholder.size(), kPlaceholder) == 0) {
        pos += kPlaceholder.size() - 1;
        continue;
      }
      auto close = value_template.find('}', pos);
      std::string what = close == std::string::npos ? "an unclosed '{'"
                                                    : "unknown placeholder '" + value_template.substr(pos, close - pos + 1) + "'";
      return core::fail(core::ErrorKind::invalid, name + "=" + value_template + ": " + what +
                                                      "; the only placeholder is {slot} (e.g. CUDA_VISIBLE_DEVICES={slot})");
    }
    if (c == '}')
      return core::fail(core::ErrorKind::invalid, name + "=" + value_template +
                                                      ": a '}' without '{'; the only placeholder is {slot}");
  }
  return SlotEnv{std::move(name), std::move(value_template)};
}

core::Expected<SlotEnv> parse_slot_env(std::string_view text) {
  auto eq = text.find('=');
  if (eq == std::string_view::npos)
    return core::fail(core::ErrorKind::invalid,
                      "'" + std::string(text) + "': expected NAME=TEMPLATE, e.g. CUDA_VISIBLE_DEVICES={slot}");
  return make_slot_env(std::string(text.substr(0, eq)), std::string(text.substr(eq + 1)));
}

std::vector<std::pair<std::string, std::string>> expand_slot_env(const std::vector<SlotEnv>& templates, int slot) {
  std::vector<std::pair<std::string, std::string>> out;
  const std::string value = std::to_string(slot);
  for (const auto& t : templates) {
    std::string v = t.value_template;
    for (auto pos = v.find(kPlaceholder); pos != std::string::npos; pos = v.find(kPlaceholder, pos + value.size()))
      v.replace(pos, kPlaceholder.size(), value);
    out.emplace_back(t.name, std::move(v));
  }
  return out;
}

bool is_secret_env_name(std::string_view name) {
  std::string upper(name);
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  for (const char* word : {"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH"})
    if (upper.find(word) != std::string::npos) return true;
  return false;
}

nlohmann::json env_for_record(const std::vector<std::pair<std::string, std::string>>& env) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, value] : env) out[name] = is_secret_env_name(name) ? "<redacted>" : value;
  return out;
}

}  // namespace kvsweep::config

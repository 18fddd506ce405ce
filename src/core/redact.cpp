#include "kvsweep/core/redact.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <mutex>
#include <set>

namespace kvsweep::core {

namespace {

std::mutex g_mutex;
std::set<std::string, std::greater<>>& secrets() {
  static std::set<std::string, std::greater<>> s;  // longest-first is not needed: each is replaced whole
  return s;
}

// llama-server, vLLM and SGLang spell it --api-key, llama-cpp-python --api_key; --token is a hub token.
constexpr std::string_view kSecretFlags[] = {"--api-key", "--api_key", "--hf-token", "--hf_token", "-hft", "--token"};
constexpr std::string_view kSecretEnvWords[] = {"KEY",        "APIKEY",      "TOKEN", "SECRET",       "PASSWORD",
                                                "PASSWD",     "CREDENTIAL",  "CREDENTIALS", "AUTH", "AUTHORIZATION"};
/// A line held longer than this is let out in pieces (a server writing no newline).
constexpr std::size_t kMaxHeldLine = std::size_t{1} << 20;

bool is_token_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '~' || c == '+' ||
         c == '/' || c == '=' || c == '%';
}

/// The end of a whitespace- or quote-delimited token starting at `from`.
std::size_t token_end(std::string_view s, std::size_t from) {
  std::size_t i = from;
  while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i])) && s[i] != '"' && s[i] != '\'' &&
         s[i] != '<' && s[i] != '>' && s[i] != '`' && s[i] != '\\')
    ++i;
  return i;
}

bool iequal_at(std::string_view s, std::size_t at, std::string_view word) {
  if (at + word.size() > s.size()) return false;
  for (std::size_t i = 0; i < word.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[at + i])) != std::tolower(static_cast<unsigned char>(word[i])))
      return false;
  return true;
}

void replace_all(std::string& s, std::string_view what) {
  for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + kRedacted.size()))
    s.replace(at, what.size(), kRedacted);
}

/// "scheme://user:password@host" → "scheme://<redacted>@host", also when the userinfo holds
/// characters a URL parser rejects ('/', '#', …).
void redact_userinfo(std::string& s) {
  for (std::size_t at = s.find("://"); at != std::string::npos; at = s.find("://", at + 3)) {
    const std::size_t start = at + 3;
    const std::size_t end = token_end(s, start);
    std::size_t sign = std::string_view(s).substr(start, end - start).rfind('@');
    if (sign == std::string_view::npos) continue;
    sign += start;
    const std::string_view userinfo = std::string_view(s).substr(start, sign - start);
    // A '/' before the '@' is a path ("host/a@b", "host:8080/a@b"), unless a ':' before it
    // is a password's, not a port's ("user:se/cret@host").
    if (const auto slash = userinfo.find('/'); slash != std::string_view::npos) {
      const auto colon = userinfo.substr(0, slash).find(':');
      if (colon == std::string_view::npos) continue;
      const std::string_view after = userinfo.substr(colon + 1, slash - colon - 1);
      if (!after.empty() && after.find_first_not_of("0123456789") == std::string_view::npos) continue;
    }
    if (userinfo == kRedacted) continue;
    s.replace(start, sign - start, kRedacted);
  }
}

/// Authorization: <scheme> <credential>, and the credential after "Bearer " / "Basic " anywhere.
void redact_authorization(std::string& s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    std::size_t value = std::string::npos;
    if (iequal_at(s, i, "authorization")) {
      std::size_t j = i + 13;
      while (j < s.size() && (s[j] == '"' || s[j] == '\'' || s[j] == ' ' || s[j] == '\\')) ++j;
      if (j < s.size() && (s[j] == ':' || s[j] == '=')) {
        ++j;
        while (j < s.size() && (s[j] == ' ' || s[j] == '"' || s[j] == '\'' || s[j] == '\\')) ++j;
        // The scheme word stays; its credential goes.
        std::size_t k = j;
        while (k < s.size() && std::isalpha(static_cast<unsigned char>(s[k]))) ++k;
        value = k < s.size() && s[k] == ' ' ? k + 1 : j;
      }
    } else if ((iequal_at(s, i, "bearer ") || iequal_at(s, i, "basic ")) &&
               (i == 0 || !std::isalnum(static_cast<unsigned char>(s[i - 1])))) {
      const std::size_t j = i + (iequal_at(s, i, "bearer ") ? 7 : 6);
      std::size_t k = j;
      while (k < s.size() && is_token_char(s[k])) ++k;
      // A credential, not a word of prose: long, and for Basic base64 (a multiple of 4).
      const bool basic = iequal_at(s, i, "basic ");
      if (k - j >= 12 && (!basic || (k - j) % 4 == 0)) value = j;
    }
    if (value == std::string::npos || value >= s.size()) continue;
    std::size_t end = value;
    while (end < s.size() && is_token_char(s[end])) ++end;
    if (end == value || std::string_view(s).substr(value, end - value) == kRedacted) continue;
    s.replace(value, end - value, kRedacted);
    i = value + kRedacted.size() - 1;
  }
}

/// "--api-key K" and "--api-key=K" in running text.
void redact_flag_values(std::string& s) {
  for (const auto flag : kSecretFlags) {
    for (std::size_t at = s.find(flag); at != std::string::npos; at = s.find(flag, at + flag.size())) {
      std::size_t j = at + flag.size();
      if (j >= s.size() || (s[j] != ' ' && s[j] != '=')) continue;  // "--api-key-file" is another flag
      if (at > 0 && !std::isspace(static_cast<unsigned char>(s[at - 1])) && s[at - 1] != '"' && s[at - 1] != '\'' &&
          s[at - 1] != '[' && s[at - 1] != ',')
        continue;
      ++j;
      while (j < s.size() && (s[j] == ' ' || s[j] == '"' || s[j] == '\'')) ++j;
      const std::size_t end = token_end(s, j);
      if (end == j || std::string_view(s).substr(j, end - j) == kRedacted) continue;
      s.replace(j, end - j, kRedacted);
    }
  }
}

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

/// "OPENAI_API_KEY=K", "HF_TOKEN='K'" in running text: an environment-style (upper-case) name.
void redact_env_values(std::string& s) {
  for (std::size_t eq = s.find('='); eq != std::string::npos; eq = s.find('=', eq + 1)) {
    std::size_t start = eq;
    while (start > 0 && is_name_char(s[start - 1])) --start;
    const std::string_view name = std::string_view(s).substr(start, eq - start);
    if (name.empty() || std::ranges::any_of(name, [](char c) { return std::islower(static_cast<unsigned char>(c)); }) ||
        !is_secret_env(name))
      continue;
    std::size_t j = eq + 1;
    while (j < s.size() && (s[j] == '"' || s[j] == '\'')) ++j;
    const std::size_t end = token_end(s, j);
    if (end == j || std::string_view(s).substr(j, end - j) == kRedacted) continue;
    s.replace(j, end - j, kRedacted);
    eq = j;
  }
}

/// The credential of an Authorization value ("Bearer K" → K), or the value when it has no scheme.
std::string_view credential_of(std::string_view value) {
  const auto space = value.find(' ');
  return space == std::string_view::npos ? value : value.substr(space + 1);
}

}  // namespace

void add_secret(std::string_view value) {
  if (value.size() < 4) return;
  std::lock_guard lock(g_mutex);
  secrets().emplace(value);
}

bool is_secret_flag(std::string_view flag) {
  return std::ranges::find(kSecretFlags, flag) != std::end(kSecretFlags);
}

bool is_secret_env(std::string_view name) {
  for (std::size_t from = 0; from <= name.size();) {
    std::size_t end = name.find('_', from);
    if (end == std::string_view::npos) end = name.size();
    const std::string_view word = name.substr(from, end - from);
    for (const auto secret : kSecretEnvWords)
      if (word.size() == secret.size() && iequal_at(word, 0, secret)) return true;
    from = end + 1;
  }
  return false;
}

void add_secrets_from_env(const std::vector<std::pair<std::string, std::string>>& env) {
  for (const auto& [name, value] : env) {
    if (!is_secret_env(name)) continue;
    add_secret(value);
    add_secret(credential_of(value));
  }
}

void add_secrets_from_args(const std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const auto eq = a.find('=');
    const std::string flag = a.substr(0, eq);
    const bool inline_value = eq != std::string::npos;
    if (!inline_value && i + 1 >= args.size()) continue;
    const std::string value = inline_value ? a.substr(eq + 1) : args[i + 1];
    if (is_secret_flag(flag)) {
      add_secret(value);
      // llama-server takes several keys separated by commas.
      for (std::size_t from = 0, comma; from < value.size(); from = comma + 1) {
        comma = value.find(',', from);
        if (comma == std::string::npos) comma = value.size();
        add_secret(std::string_view(value).substr(from, comma - from));
      }
    }
    if (flag == "--api-key-file") {
      std::ifstream in(value);
      std::string line;
      while (std::getline(in, line)) add_secret(line);  // llama-server takes one key per line
    }
  }
}

std::string redact(std::string_view text) {
  std::string s(text);
  {
    std::lock_guard lock(g_mutex);
    for (const auto& secret : secrets()) replace_all(s, secret);
  }
  redact_userinfo(s);
  redact_authorization(s);
  redact_flag_values(s);
  redact_env_values(s);
  return s;
}

std::string LineRedactor::feed(std::string_view chunk) {
  m_pending.append(chunk);
  const auto last = m_pending.rfind('\n');
  if (last == std::string::npos) return m_pending.size() > kMaxHeldLine ? finish() : std::string();
  std::string out = redact(std::string_view(m_pending).substr(0, last + 1));
  m_pending.erase(0, last + 1);
  return out;
}

std::string LineRedactor::finish() {
  std::string out = redact(m_pending);
  m_pending.clear();
  return out;
}

nlohmann::json redact_json(const nlohmann::json& doc) {
  if (doc.is_string()) return redact(std::string_view(doc.get_ref<const std::string&>()));
  if (doc.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    bool secret_next = false;
    for (const auto& e : doc) {
      if (secret_next && e.is_string()) out.push_back(std::string(kRedacted));
      else out.push_back(redact_json(e));
      secret_next = e.is_string() && is_secret_flag(e.get_ref<const std::string&>());
    }
    return out;
  }
  if (doc.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (auto it = doc.begin(); it != doc.end(); ++it) out[redact(std::string_view(it.key()))] = redact_json(it.value());
    return out;
  }
  return doc;
}

}  // namespace kvsweep::core

#include "kvsweep/probe/recall/shared_prefix.hpp"

#include <algorithm>

namespace kvsweep::probe {

SharedPrefix::SharedPrefix(const std::string& text) {
  const auto last = text.find_last_not_of(" \t\r\n");
  const std::size_t split = last == std::string::npos ? 0 : last + 1;
  m_head = text.substr(0, split);
  m_tail = text.substr(split);
}

core::Expected<SharedPrefix::ModelTokens*> SharedPrefix::model_tokens(server::Api& api, const std::string& model) {
  ModelTokens& m = m_models[model];
  if (m.head || m.unsupported) return &m;
  auto head = api.tokenize(m_head, true);
  if (!head) {
    if (head.error().kind != core::ErrorKind::unsupported) return std::unexpected(head.error());
    m.unsupported = true;
    m.mode = RestTokens::text;
    return &m;
  }
  m.head = std::move(*head);
  return &m;
}

core::Expected<std::optional<int>> SharedPrefix::head_tokens(server::Api& api, const std::string& model) {
  std::lock_guard lock(m_mutex);
  auto m = model_tokens(api, model);
  if (!m) return std::unexpected(m.error());
  if ((*m)->unsupported) return std::optional<int>();
  return std::optional<int>(static_cast<int>((*m)->head->size()));
}

core::Expected<std::optional<std::vector<std::int32_t>>> SharedPrefix::rest_tokens(server::Api& api, ModelTokens& m,
                                                                                     RestTokens mode,
                                                                                     std::string_view rest) {
  const std::string text = m_tail + std::string(rest);
  if (mode == RestTokens::plain) {
    auto ids = api.tokenize(text, false);
    if (!ids) return std::unexpected(ids.error());
    return std::optional(std::move(*ids));
  }
  if (m.newline.empty()) {
    auto newline = api.tokenize("\n", false);
    if (!newline) return std::unexpected(newline.error());
    m.newline = std::move(*newline);
  }
  auto ids = api.tokenize("\n" + text, false);
  if (!ids) return std::unexpected(ids.error());
  if (ids->size() < m.newline.size() || !std::equal(m.newline.begin(), m.newline.end(), ids->begin()))
    return std::optional<std::vector<std::int32_t>>();
  ids->erase(ids->begin(), ids->begin() + static_cast<std::ptrdiff_t>(m.newline.size()));
  return std::optional(std::move(*ids));
}

core::Expected<std::optional<std::vector<std::int32_t>>> SharedPrefix::prompt_ids(server::Api& api,
                                                                                    const std::string& model,
                                                                                    std::string_view rest) {
  using Ids = std::optional<std::vector<std::int32_t>>;
  std::lock_guard lock(m_mutex);
  auto found = model_tokens(api, model);
  if (!found) return std::unexpected(found.error());
  ModelTokens& m = **found;
  if (m.unsupported || m.mode == RestTokens::text) return Ids();
  const auto joined = [&](const std::vector<std::int32_t>& tail) {
    std::vector<std::int32_t> ids;
    ids.reserve(m.head->size() + tail.size());
    ids.insert(ids.end(), m.head->begin(), m.head->end());
    ids.insert(ids.end(), tail.begin(), tail.end());
    return ids;
  };
  if (m.mode == RestTokens::unchecked) {
    // Once per model: what the server makes of the whole text, against each way of continuing.
    auto whole = api.tokenize(m_head + m_tail + std::string(rest), true);
    if (!whole) return std::unexpected(whole.error());
    m.mode = RestTokens::text;
    for (const RestTokens mode : {RestTokens::plain, RestTokens::after_newline}) {
      auto tail = rest_tokens(api, m, mode, rest);
      if (!tail) return std::unexpected(tail.error());
      if (*tail && joined(**tail) == *whole) {
        m.mode = mode;
        return std::optional(std::move(*whole));
      }
    }
    return Ids();
  }
  auto tail = rest_tokens(api, m, m.mode, rest);
  if (!tail) return std::unexpected(tail.error());
  if (!*tail) return Ids();
  return std::optional(joined(**tail));
}

RestTokens SharedPrefix::mode(const std::string& model) const {
  std::lock_guard lock(m_mutex);
  const auto it = m_models.find(model);
  return it == m_models.end() ? RestTokens::unchecked : it->second.mode;
}

}  // namespace kvsweep::probe

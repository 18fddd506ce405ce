#include "kvsweep/report/format.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "kvsweep/core/file_name.hpp"

namespace kvsweep::report {

namespace {

constexpr double kFixedLimit = 1e15;

bool ascii_punctuation(char c) { return std::ispunct(static_cast<unsigned char>(c)) != 0 && static_cast<unsigned char>(c) < 0x80; }
bool ascii_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

}  // namespace

std::string fixed(double v, int decimals, std::string_view nan_text) {
  if (!std::isfinite(v)) return std::isnan(v) ? std::string(nan_text) : (v > 0 ? "inf" : "-inf");
  char buf[64];
  // From 1e15 on the digits after the point say nothing, and from ~1e61 "%.2f" no longer fits the
  // buffer (a cut, wrong 63-digit figure): an exponent keeps the magnitude.
  if (std::fabs(v) >= kFixedLimit) {
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
  }
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s(buf);
  // A value that rounds to zero from below prints as "-0.00"; it is zero at this precision.
  if (s.front() == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
  return s;
}

std::string signed_fixed(double v, int decimals, std::string_view nan_text) {
  std::string s = fixed(v, decimals, nan_text);
  if (std::isfinite(v) && s.front() != '-' && s.find_first_not_of("0.") != std::string::npos) s.insert(0, "+");
  return s;
}

std::string shortest(double v) {
  if (!std::isfinite(v)) return "";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  if (ec != std::errc()) return "";
  return std::string(buf, end);
}

int decimals_for(std::span<const double> values) {
  for (double v : values) {
    if (std::isfinite(v) && std::fabs(v) >= 10.0) return 2;
  }
  return 3;
}

std::string format_p(double p) {
  if (std::isnan(p)) return "—";
  if (p < 0.001) return "<0.001";
  return fixed(p, 3);
}

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 forbids most control characters even escaped; a raw response may hold them.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r') {
          out += ' ';
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string csv_field(std::string_view text) {
  // OWASP's CSV injection rule: a cell a spreadsheet would read as a formula (= + - @, or a tab or CR
  // before one) is prefixed with a quote, and quoted, so it is shown as text.
  // A number ("-0.5", "-1e+61") is no formula and stays as it is.
  double number = 0;
  const bool numeric = !text.empty() && std::from_chars(text.data(), text.data() + text.size(), number).ptr ==
                                            text.data() + text.size();
  const bool formula = !numeric && !text.empty() && std::string_view("=+-@\t\r").find(text.front()) != std::string_view::npos;
  if (!formula && text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = formula ? "\"'" : "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string md_cell(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const char next = i + 1 < text.size() ? text[i + 1] : '\0';
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else if (c == '\\' && ascii_punctuation(next)) {
      out += "\\\\";  // else it would escape the escape that follows ("\\](" → a live "](")
    } else if (c == '<' && (ascii_letter(next) || next == '/' || next == '!' || next == '?')) {
      out += "&lt;";  // what could open raw HTML (a tag, a comment, an autolink); "<0.001" stays
    } else if (c == '&' && (ascii_letter(next) || next == '#')) {
      out += "&amp;";  // what could be an entity
    } else if (c == ']' && (next == '(' || next == '[' || next == ':')) {
      out += "\\]";  // no inline link, image, reference or definition; "[a, b]" stays
    } else {
      out += c;
    }
  }
  return out;
}

std::string md_code(std::string_view text) {
  // A code span takes no backslash escapes: its fence is one backtick longer than any run inside.
  std::size_t run = 0, longest = 0;
  for (char c : text) longest = std::max(longest, run = c == '`' ? run + 1 : 0);
  const std::string fence(longest + 1, '`');
  const bool pad = !text.empty() && (text.front() == '`' || text.back() == '`');
  std::string out = fence + (pad ? " " : "");
  for (char c : text) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else out += c;
  }
  return out + (pad ? " " : "") + fence;
}

std::string slug(std::string_view text) {
  // The one file-name rule (config::check_file_names refuses names it would make alike).
  return text.empty() ? "_" : core::file_safe(text);
}

bool natural_less(std::string_view a, std::string_view b) {
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      std::size_t i0 = i, j0 = j;
      while (i0 < a.size() && a[i0] == '0') ++i0;
      while (j0 < b.size() && b[j0] == '0') ++j0;
      std::size_t i1 = i0, j1 = j0;
      while (i1 < a.size() && digit(a[i1])) ++i1;
      while (j1 < b.size() && digit(b[j1])) ++j1;
      // More significant digits is larger; same length compares lexicographically.
      if (i1 - i0 != j1 - j0) return i1 - i0 < j1 - j0;
      const auto cmp = a.substr(i0, i1 - i0).compare(b.substr(j0, j1 - j0));
      if (cmp != 0) return cmp < 0;
      if (i1 - i != j1 - j) return i1 - i < j1 - j;  // "p01" after "p1"
      i = i1;
      j = j1;
    } else {
      if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

std::string duration_text(double seconds) {
  const int t = static_cast<int>(seconds + 0.5);
  char buf[32];
  if (t >= 3600) std::snprintf(buf, sizeof buf, "%dh%02dm", t / 3600, (t / 60) % 60);
  else std::snprintf(buf, sizeof buf, "%dm%02ds", t / 60, t % 60);
  return buf;
}

std::string rotation_label(int attn_rot_k, int attn_rot_v) {
  if (attn_rot_k < 0 && attn_rot_v < 0) return "-";
  const auto one = [](int r) { return r < 0 ? std::string("?") : r > 0 ? std::string("on") : std::string("off"); };
  return one(attn_rot_k) + "/" + one(attn_rot_v);
}

std::string mean_sd(double mean, double sd, int decimals) {
  if (std::isnan(mean)) return "—";
  if (std::isnan(sd)) return fixed(mean, decimals);
  return fixed(mean, decimals) + " ± " + fixed(sd, decimals);
}

std::string bytes_text(double bytes) { return std::isfinite(bytes) ? fixed(bytes, bytes >= 100 ? 0 : 1) : "—"; }

}  // namespace kvsweep::report

#include "kvsweep/report/format.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "kvsweep/core/file_name.hpp"

namespace kvsweep::report {

std::string fixed(double v, int decimals, std::string_view nan_text) {
  if (!std::isfinite(v)) return std::isnan(v) ? std::string(nan_text) : (v > 0 ? "inf" : "-inf");
  char buf[64];
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
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string md_cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
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

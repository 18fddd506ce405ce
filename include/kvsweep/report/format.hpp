#pragma once
/// Small text helpers every report writer shares: number formatting, escaping for XML/CSV/Markdown, natural order.

#include <span>
#include <string>
#include <string_view>

namespace kvsweep::report {

/// `v` with exactly `decimals` digits after the point ("-0.00" is printed as "0.00"); NaN → `nan_text`;
/// from 1e15 on in exponent form ("%.6g": "1e+61"), which keeps the magnitude.
std::string fixed(double v, int decimals, std::string_view nan_text = "—");

/// As fixed() with a leading '+' for positive values (deltas).
std::string signed_fixed(double v, int decimals, std::string_view nan_text = "—");

/// Shortest text that reads back as the same double (std::to_chars); NaN and infinities → "".
std::string shortest(double v);

/// Decimals to show a set of values with: 2 when any |value| >= 10 (seed 001's grids), else 3.
int decimals_for(std::span<const double> values);

/// p-value for tables: "<0.001" under 0.001, else 3 decimals; NaN → "—".
std::string format_p(double p);

std::string xml_escape(std::string_view text);

/// RFC 4180: quoted (with doubled quotes) when the field holds a comma, quote, CR or LF; a field
/// starting with = + - @ (or a tab or CR), which a spreadsheet would run as a formula, is quoted and
/// prefixed with ' (OWASP's CSV injection rule); a number ("-0.5") stays as it is.
std::string csv_field(std::string_view text);

/// Safe inside a Markdown table cell and any text: '|' escaped, line breaks as spaces, and nothing
/// live that HTML would escape: '<' opening a tag, comment or autolink as "&lt;", '&' opening an
/// entity as "&amp;", a ']' before '(' '[' ':' (a link, image, reference) and a '\' before
/// punctuation escaped with '\'.
std::string md_cell(std::string_view text);

/// A Markdown code span of `text`: fenced by one backtick more than its longest run, '|' escaped.
std::string md_code(std::string_view text);

/// A file-name part: core::file_safe (the one rule), "_" for an empty text.
std::string slug(std::string_view text);

/// "1.50 ± 0.20"; the mean alone when `sd` is NaN (one value has no spread); "—" when `mean` is NaN.
std::string mean_sd(double mean, double sd, int decimals);
/// A size in bytes (per token): no decimals from 100 on, one below; "—" when not finite.
std::string bytes_text(double bytes);

/// "p2" < "p10": runs of digits compare by value, the rest byte by byte.
bool natural_less(std::string_view a, std::string_view b);

/// A duration for people: "4m10s" under an hour, "2h05m" from one; rounded to the second.
std::string duration_text(double seconds);

/// Attention rotation (llama.cpp's attn_rot_k / attn_rot_v: 1, 0, or -1 when the log did not
/// say) as a table cell: "on/off" for K/V, "-" when neither is known.
std::string rotation_label(int attn_rot_k, int attn_rot_v);

}  // namespace kvsweep::report

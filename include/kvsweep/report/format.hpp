#pragma once
/// Small text helpers every report writer shares: number formatting, escaping for XML/CSV/Markdown, natural order.

#include <span>
#include <string>
#include <string_view>

namespace kvsweep::report {

/// `v` with exactly `decimals` digits after the point ("-0.00" is printed as "0.00"); NaN → `nan_text`.
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

/// RFC 4180: quoted (with doubled quotes) when the field holds a comma, quote, CR or LF.
std::string csv_field(std::string_view text);

/// Safe inside a Markdown table cell: '|' escaped, line breaks as spaces.
std::string md_cell(std::string_view text);

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

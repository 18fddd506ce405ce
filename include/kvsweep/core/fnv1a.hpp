#pragma once
/// FNV-1a 64, the small string hash kvsweep uses where a value must be the same on every platform
/// (config hashes, generated-prompt hashes, per-tensor seeds); not for anything adversarial.

#include <cstdint>
#include <string>
#include <string_view>

namespace kvsweep::core {

inline constexpr std::uint64_t kFnv1aOffsetBasis = 0xcbf29ce484222325ULL;

/// Fowler–Noll–Vo 1a over the bytes of `s` (offset basis and prime from the FNV reference); pass an
/// earlier result as `h` to hash several strings as one.
constexpr std::uint64_t fnv1a64(std::string_view s, std::uint64_t h = kFnv1aOffsetBasis) {
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

/// `h` as 16 lowercase hex digits.
inline std::string hex16(std::uint64_t h) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) out[static_cast<std::size_t>(i)] = kHex[h & 0xf];
  return out;
}

}  // namespace kvsweep::core

#pragma once
/// SplitMix64, a tiny seeded random generator whose output is the same on every platform and compiler.

#include <cstdint>

namespace kvsweep::stats {

/// Steele, Lea & Flood, "Fast splittable pseudorandom number generators" (OOPSLA 2014); the
/// constants are those of Vigna's public-domain reference splitmix64.c. Only fixed-width unsigned
/// arithmetic is used, so a seed reproduces the same stream everywhere (unlike std::uniform_int_distribution,
/// whose algorithm the standard leaves to the library).
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : m_state(seed) {}

  std::uint64_t next() {
    std::uint64_t z = (m_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  /// Uniform integer in [0, n) without modulo bias: draws below 2^64 mod n are rejected, so the
  /// accepted range holds a whole number of copies of [0, n). n must be > 0.
  std::uint64_t below(std::uint64_t n) {
    const std::uint64_t reject_under = (0 - n) % n;  // == 2^64 mod n
    for (;;) {
      const std::uint64_t r = next();
      if (r >= reject_under) return r % n;
    }
  }

 private:
  std::uint64_t m_state;
};

}  // namespace kvsweep::stats

#pragma once
/// Stratified sampling of recall targets, bit-compatible with the published codeneedle
/// harness, and the port of CPython's `random.Random` (Mersenne Twister) it rests on.

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "kvsweep/corpus/extract.hpp"

namespace kvsweep::corpus {

/// CPython's `random.Random` seeded with an int: MT19937 seeded by `init_by_array` over
/// the 32-bit little-endian chunks of abs(seed), with `getrandbits`, `_randbelow`
/// (rejection sampling), `choice` and `shuffle` exactly as Lib/random.py (3.2 – 3.13)
/// and Modules/_randommodule.c define them. Same seed, same calls → same numbers as Python.
class PyRandom {
 public:
  explicit PyRandom(std::int64_t seed);

  /// random.getrandbits(k) for 0 <= k <= 64 (Python joins 32-bit words, low word first).
  std::uint64_t getrandbits(int k);
  /// random._randbelow(n) for n >= 1: getrandbits(n.bit_length()) until the value is < n.
  std::uint64_t randbelow(std::uint64_t n);
  /// The index random.choice(seq) would pick for a sequence of `size` >= 1 elements.
  std::size_t choice_index(std::size_t size) { return static_cast<std::size_t>(randbelow(size)); }

  /// random.shuffle(items) in place.
  template <class T>
  void shuffle(std::vector<T>& items) {
    for (std::size_t i = items.size(); i-- > 1;) {
      const auto j = static_cast<std::size_t>(randbelow(i + 1));
      std::swap(items[i], items[j]);
    }
  }

  /// One raw 32-bit output of the generator (genrand_uint32).
  std::uint32_t next_u32();

 private:
  void init_genrand(std::uint32_t s);
  void init_by_array(std::span<const std::uint32_t> key);

  static constexpr int N = 624;
  std::array<std::uint32_t, N> m_state{};
  int m_index = N + 1;
};

/// The published harness's total_lines for a corpus text: text.count("\n") + 1.
int count_total_lines(std::string_view text);

/// codeneedle's stratified_sample(targets, total_lines, k, seed): when there are at most k
/// targets all are returned in their given order; otherwise targets are sorted by
/// body_start_line (stable), put in bucket min(k-1, body_start_line*k / max(1, total_lines)),
/// one random.Random(seed).choice is drawn per non-empty bucket in bucket order, then the
/// rest are shuffled and popped from the end until k are chosen. Returns indices into
/// `targets`, in the order chosen.
std::vector<std::size_t> stratified_sample_indices(std::span<const Target> targets, int total_lines, int k,
                                                   std::int64_t seed);

/// The same selection as copies of the targets.
std::vector<Target> stratified_sample(std::span<const Target> targets, int total_lines, int k, std::int64_t seed);

}  // namespace kvsweep::corpus

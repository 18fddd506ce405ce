#include "kvsweep/corpus/sample.hpp"

#include <algorithm>
#include <bit>
#include <unordered_set>

namespace kvsweep::corpus {

// MT19937 as in CPython's Modules/_randommodule.c (Matsumoto & Nishimura, 1998).
namespace {
constexpr int M = 397;
constexpr std::uint32_t k_matrix_a = 0x9908b0dfU;
constexpr std::uint32_t k_upper_mask = 0x80000000U;
constexpr std::uint32_t k_lower_mask = 0x7fffffffU;
}  // namespace

void PyRandom::init_genrand(std::uint32_t s) {
  m_state[0] = s;
  for (int i = 1; i < N; ++i) {
    const std::uint32_t prev = m_state[static_cast<std::size_t>(i - 1)];
    m_state[static_cast<std::size_t>(i)] = 1812433253U * (prev ^ (prev >> 30)) + static_cast<std::uint32_t>(i);
  }
  m_index = N;
}

void PyRandom::init_by_array(std::span<const std::uint32_t> key) {
  init_genrand(19650218U);
  std::size_t i = 1;
  std::size_t j = 0;
  const std::size_t n = N;
  const std::size_t key_length = key.size();
  for (std::size_t k = std::max(n, key_length); k > 0; --k) {
    const std::uint32_t prev = m_state[i - 1];
    m_state[i] = (m_state[i] ^ ((prev ^ (prev >> 30)) * 1664525U)) + key[j] + static_cast<std::uint32_t>(j);
    ++i;
    ++j;
    if (i >= n) {
      m_state[0] = m_state[n - 1];
      i = 1;
    }
    if (j >= key_length) j = 0;
  }
  for (std::size_t k = n - 1; k > 0; --k) {
    const std::uint32_t prev = m_state[i - 1];
    m_state[i] = (m_state[i] ^ ((prev ^ (prev >> 30)) * 1566083941U)) - static_cast<std::uint32_t>(i);
    ++i;
    if (i >= n) {
      m_state[0] = m_state[n - 1];
      i = 1;
    }
  }
  m_state[0] = 0x80000000U;  // MSB is 1, assuring a non-zero initial array
  m_index = N;
}

PyRandom::PyRandom(std::int64_t seed) {
  // random_seed(): the key is abs(seed) split into 32-bit words, least significant first;
  // zero gives the one-word key [0].
  std::uint64_t magnitude = seed < 0 ? (~static_cast<std::uint64_t>(seed) + 1) : static_cast<std::uint64_t>(seed);
  std::vector<std::uint32_t> key;
  while (magnitude != 0) {
    key.push_back(static_cast<std::uint32_t>(magnitude & 0xffffffffU));
    magnitude >>= 32;
  }
  if (key.empty()) key.push_back(0);
  init_by_array(key);
}

std::uint32_t PyRandom::next_u32() {
  if (m_index >= N) {
    int kk = 0;
    for (; kk < N - M; ++kk) {
      const std::uint32_t y = (m_state[static_cast<std::size_t>(kk)] & k_upper_mask) |
                              (m_state[static_cast<std::size_t>(kk + 1)] & k_lower_mask);
      m_state[static_cast<std::size_t>(kk)] =
          m_state[static_cast<std::size_t>(kk + M)] ^ (y >> 1) ^ ((y & 1U) != 0 ? k_matrix_a : 0U);
    }
    for (; kk < N - 1; ++kk) {
      const std::uint32_t y = (m_state[static_cast<std::size_t>(kk)] & k_upper_mask) |
                              (m_state[static_cast<std::size_t>(kk + 1)] & k_lower_mask);
      m_state[static_cast<std::size_t>(kk)] =
          m_state[static_cast<std::size_t>(kk + (M - N))] ^ (y >> 1) ^ ((y & 1U) != 0 ? k_matrix_a : 0U);
    }
    const std::uint32_t y = (m_state[N - 1] & k_upper_mask) | (m_state[0] & k_lower_mask);
    m_state[N - 1] = m_state[M - 1] ^ (y >> 1) ^ ((y & 1U) != 0 ? k_matrix_a : 0U);
    m_index = 0;
  }
  std::uint32_t y = m_state[static_cast<std::size_t>(m_index++)];
  y ^= (y >> 11);
  y ^= (y << 7) & 0x9d2c5680U;
  y ^= (y << 15) & 0xefc60000U;
  y ^= (y >> 18);
  return y;
}

std::uint64_t PyRandom::getrandbits(int k) {
  if (k <= 0) return 0;
  if (k <= 32) return next_u32() >> (32 - k);
  // Words are filled least significant first; the last (most significant) one is cut to size.
  const std::uint64_t low = next_u32();
  const std::uint64_t high = next_u32() >> (64 - std::min(k, 64));
  return low | (high << 32);
}

std::uint64_t PyRandom::randbelow(std::uint64_t n) {
  const int k = static_cast<int>(std::bit_width(n));
  std::uint64_t r = getrandbits(k);
  while (r >= n) r = getrandbits(k);
  return r;
}

int count_total_lines(std::string_view text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
}

std::vector<std::size_t> stratified_sample_indices(std::span<const Target> targets, int total_lines, int k,
                                                   std::int64_t seed) {
  std::vector<std::size_t> order(targets.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (k <= 0) return {};
  if (targets.size() <= static_cast<std::size_t>(k)) return order;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return targets[a].body_start_line < targets[b].body_start_line;
  });
  PyRandom rng(seed);
  const auto kk = static_cast<long long>(k);
  const long long lines = std::max(1, total_lines);
  std::vector<std::vector<std::size_t>> buckets(static_cast<std::size_t>(k));
  for (std::size_t idx : order) {
    // Python's // floors; start lines and total_lines are positive, so truncation agrees.
    const long long b = std::min(kk - 1, static_cast<long long>(targets[idx].body_start_line) * kk / lines);
    buckets[static_cast<std::size_t>(std::max(0LL, b))].push_back(idx);
  }
  std::vector<std::size_t> chosen;
  std::unordered_set<std::string> chosen_names;
  for (const auto& bucket : buckets) {
    if (bucket.empty()) continue;
    const std::size_t pick = bucket[rng.choice_index(bucket.size())];
    chosen.push_back(pick);
    chosen_names.insert(targets[pick].name);
  }
  std::vector<std::size_t> pool;
  for (std::size_t idx : order) {
    if (!chosen_names.contains(targets[idx].name)) pool.push_back(idx);
  }
  rng.shuffle(pool);
  while (chosen.size() < static_cast<std::size_t>(k) && !pool.empty()) {
    chosen.push_back(pool.back());
    pool.pop_back();
  }
  return chosen;
}

std::vector<Target> stratified_sample(std::span<const Target> targets, int total_lines, int k, std::int64_t seed) {
  std::vector<Target> out;
  for (std::size_t idx : stratified_sample_indices(targets, total_lines, k, seed)) out.push_back(targets[idx]);
  return out;
}

}  // namespace kvsweep::corpus

#pragma once
/// Cosine similarity of two embedding vectors.

#include <span>

namespace kvsweep::score {

/// dot(a, b) / (|a| |b|), accumulated in double.
/// Edge cases: sizes differ → NaN (the vectors come from different embedders: a caller bug, not
/// a similarity); either vector all zeros (or both empty) → 0, since there is no direction
/// to agree with; a NaN or infinite element propagates as NaN.
double cosine_similarity(std::span<const float> a, std::span<const float> b);

}  // namespace kvsweep::score

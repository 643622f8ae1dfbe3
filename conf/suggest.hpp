// "Did you mean" for misspelt parameter names, file keys and variables.
// Internal to conf/ (and gridmpi-info).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gridmpi::conf {

// Edit distance (insertions, deletions, substitutions, adjacent swaps).
std::size_t edit_distance(std::string_view a, std::string_view b);
// The candidate closest to `word` when it is close enough to be a plausible
// typo (distance at most a third of the word's length, at least 1, at most 3).
std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace gridmpi::conf

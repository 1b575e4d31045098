#pragma once
// What a wrong command line gets told, beyond CLI11's own message: the unknown flag by name with
// the nearest known one ("did you mean '--interval'?"), and for `ferry run` a command given
// without '--' before it. Pure functions of the parsed command tree and argv; no I/O.

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace ferry::cli {

// Edit distance (insertions, deletions, substitutions, adjacent swaps) between two strings.
size_t EditDistance(std::string_view a, std::string_view b);

// The candidate nearest to `word` if it is close enough to be a typo of it (distance at most
// max(2, |word| / 4); a candidate that starts with `word` counts too), else "".
std::string NearestName(std::string_view word, const std::vector<std::string>& candidates);

// Explains why `args` (argv without argv[0]) did not parse against `app`, in one line without
// the "ferry: usage error:" prefix: the first flag that the chosen (sub)command does not know,
// with a suggestion, or `ferry run`'s missing '--'. Returns "" when it finds nothing to say
// beyond CLI11's message.
std::string ExplainUsageError(const CLI::App& app, const std::vector<std::string>& args);

// "ferry shard verify": the (sub)command that `args` names, for "see ... --help".
std::string UsageCommand(const CLI::App& app, const std::vector<std::string>& args);

}  // namespace ferry::cli

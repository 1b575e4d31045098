#include "cli/usage_hints.h"

#include <algorithm>

namespace ferry::cli {

namespace {

const CLI::App* FindSubcommand(const CLI::App& app, const std::string& name) {
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (!sub->get_name().empty() && sub->check_name(name)) return sub;
  }
  return nullptr;
}

// The option named `flag` ("--json", "-r") in `app`, or in an ancestor when `app` lets unknown
// options fall through to it; null when none knows it.
const CLI::Option* FindFlag(const CLI::App* app, const std::string& flag) {
  for (; app; app = app->get_parent()) {
    if (const CLI::Option* opt = app->get_option_no_throw(flag)) return opt;
    if (!app->get_fallthrough()) break;
  }
  return nullptr;
}

std::vector<std::string> FlagNames(const CLI::App* app) {
  std::vector<std::string> names;
  for (; app; app = app->get_parent()) {
    for (const CLI::Option* opt : app->get_options()) {
      for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
      for (const auto& s : opt->get_snames()) names.push_back("-" + s);
    }
    if (!app->get_fallthrough()) break;
  }
  return names;
}

std::string CommandPath(const CLI::App* app) {
  std::string path;
  for (; app && app->get_parent(); app = app->get_parent()) path = " " + app->get_name() + path;
  return "ferry" + path;
}

}  // namespace

size_t EditDistance(std::string_view a, std::string_view b) {
  // Optimal string alignment distance: Levenshtein plus swaps of two neighbouring characters.
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

std::string NearestName(std::string_view word, const std::vector<std::string>& candidates) {
  const size_t limit = std::max<size_t>(2, word.size() / 4);
  std::string best;
  size_t best_distance = limit + 1;
  for (const auto& c : candidates) {
    size_t dist = EditDistance(word, c);
    // "--verif" for "--verify", "--rec" for "--recursive": a prefix of a long flag.
    if (word.size() >= 4 && c.size() > word.size() && c.compare(0, word.size(), word) == 0) {
      dist = std::min<size_t>(dist, 1);
    }
    if (dist < best_distance) {
      best_distance = dist;
      best = c;
    }
  }
  return best;
}

std::string UsageCommand(const CLI::App& app, const std::vector<std::string>& args) {
  const CLI::App* cmd = &app;
  for (const auto& arg : args) {
    if (arg == "--") break;
    if (arg.empty() || arg[0] == '-') continue;
    const CLI::App* sub = FindSubcommand(*cmd, arg);
    if (!sub) break;
    cmd = sub;
  }
  return CommandPath(cmd);
}

std::string ExplainUsageError(const CLI::App& app, const std::vector<std::string>& args) {
  const CLI::App* cmd = &app;
  std::string first_positional;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-') {
      if (first_positional.empty()) {
        if (const CLI::App* sub = FindSubcommand(*cmd, arg)) {
          cmd = sub;
          continue;
        }
        first_positional = arg;
      }
      continue;
    }
    const bool long_flag = arg[1] == '-';
    std::string name;
    if (long_flag) {
      name = arg.substr(0, arg.find('='));
      if (const CLI::Option* opt = FindFlag(cmd, name)) {
        // A value in the next argument ("--interval 10"), unless given as --flag=value.
        if (opt->get_expected_max() > 0 && arg.find('=') == std::string::npos) ++i;
        continue;
      }
    } else {
      // "-rL": each letter a flag, until one that takes a value (the rest of the word, or the
      // next argument).
      for (size_t k = 1; k < arg.size(); ++k) {
        const CLI::Option* opt = FindFlag(cmd, std::string("-") + arg[k]);
        if (!opt) {
          name = std::string("-") + arg[k];
          break;
        }
        if (opt->get_expected_max() > 0) {
          if (k + 1 == arg.size()) ++i;
          break;
        }
      }
      if (name.empty()) continue;
    }
    const std::string where = CommandPath(cmd);
    if (cmd->get_name() == "run" && !first_positional.empty()) {
      return "'" + name + "' is not a flag of " + where + "; if it belongs to the command '" +
             first_positional + "', put '--' before the command: ferry run [FLAGS] -- " +
             first_positional + " ...";
    }
    // One letter is one typo away from every other: no guess for short flags.
    std::string hint = name.size() > 2 ? NearestName(name, FlagNames(cmd)) : "";
    if (!hint.empty()) {
      return "unknown flag '" + name + "' for " + where + "; did you mean '" + hint + "'? (see " +
             where + " --help)";
    }
    return "unknown flag '" + name + "' for " + where + " (see " + where + " --help)";
  }
  return "";
}

}  // namespace ferry::cli

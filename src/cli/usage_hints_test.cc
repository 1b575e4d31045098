#include "cli/usage_hints.h"

#include <gtest/gtest.h>

namespace ferry::cli {
namespace {

TEST(EditDistanceTest, CountsEditsAndSwaps) {
  EXPECT_EQ(EditDistance("--interval", "--interval"), 0u);
  EXPECT_EQ(EditDistance("--intervall", "--interval"), 1u);
  EXPECT_EQ(EditDistance("--jsno", "--json"), 1u);  // two neighbours swapped
  EXPECT_EQ(EditDistance("", "ab"), 2u);
}

TEST(NearestNameTest, SuggestsCloseFlagsOnly) {
  std::vector<std::string> flags = {"--interval", "--in", "--out", "--json", "--recursive"};
  EXPECT_EQ(NearestName("--intervall", flags), "--interval");
  EXPECT_EQ(NearestName("--recursiv", flags), "--recursive");
  EXPECT_EQ(NearestName("--recur", flags), "--recursive");  // a prefix of a long flag
  EXPECT_EQ(NearestName("--frobnicate", flags), "");
}

struct Tree {
  CLI::App app{"test"};
  std::string interval, out;
  std::vector<std::string> command;
  bool json = false, verbose = false;
  Tree() {
    app.fallthrough();  // as ferry's: -v also after the subcommand
    app.add_flag("-v", verbose);
    auto* run = app.add_subcommand("run");
    run->add_option("--interval", interval);
    run->add_option("--out", out);
    run->add_flag("--json", json);
    run->add_option("command", command);
    auto* shard = app.add_subcommand("shard");
    shard->add_subcommand("verify")->add_flag("--json", json);
  }
};

TEST(ExplainUsageErrorTest, NamesTheUnknownFlagAndTheNearestOne) {
  Tree t;
  EXPECT_EQ(ExplainUsageError(t.app, {"run", "--intervall", "10", "--", "true"}),
            "unknown flag '--intervall' for ferry run; did you mean '--interval'? "
            "(see ferry run --help)");
  EXPECT_EQ(ExplainUsageError(t.app, {"shard", "verify", "--jsn", "x"}),
            "unknown flag '--jsn' for ferry shard verify; did you mean '--json'? "
            "(see ferry shard verify --help)");
  EXPECT_EQ(ExplainUsageError(t.app, {"run", "--zzzzzzzz", "--", "true"}),
            "unknown flag '--zzzzzzzz' for ferry run (see ferry run --help)");
}

TEST(ExplainUsageErrorTest, SkipsFlagValuesAndEverythingAfterDoubleDash) {
  Tree t;
  // "--out" takes "--weird-value" as its value; after "--" everything is the command's.
  EXPECT_EQ(ExplainUsageError(t.app, {"run", "--out", "--weird", "--", "x", "--intervall"}), "");
  EXPECT_EQ(ExplainUsageError(t.app, {"run", "--interval=5", "--", "x"}), "");
}

TEST(ExplainUsageErrorTest, ChecksEachLetterOfCombinedShortFlagsAndKnowsGlobalOnes) {
  Tree t;
  EXPECT_EQ(ExplainUsageError(t.app, {"run", "-v", "--", "true"}), "");
  // One letter is one typo away from every other: no guess.
  EXPECT_EQ(ExplainUsageError(t.app, {"run", "-vq", "--", "true"}),
            "unknown flag '-q' for ferry run (see ferry run --help)");
  EXPECT_EQ(UsageCommand(t.app, {"shard", "verify", "x"}), "ferry shard verify");
  EXPECT_EQ(UsageCommand(t.app, {"-v", "run", "--", "shard"}), "ferry run");
}

TEST(ExplainUsageErrorTest, ExplainsAMissingDoubleDashInRun) {
  Tree t;
  std::string s = ExplainUsageError(t.app, {"run", "--out", "a=b", "python", "-u", "train.py"});
  EXPECT_EQ(s,
            "'-u' is not a flag of ferry run; if it belongs to the command 'python', put '--' "
            "before the command: ferry run [FLAGS] -- python ...");
}

}  // namespace
}  // namespace ferry::cli

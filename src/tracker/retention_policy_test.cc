#include "tracker/retention_policy.h"

#include <gtest/gtest.h>

#include <limits>

namespace ferry::tracker {
namespace {

std::vector<CheckpointState> Checkpoints(std::initializer_list<const char*> names) {
  std::vector<CheckpointState> out;
  for (const char* n : names) out.push_back({n, false});
  return out;
}

// The names kept, in input order.
std::vector<std::string> Kept(const std::vector<RetentionDecision>& ds) {
  std::vector<std::string> out;
  for (const auto& d : ds) {
    if (d.keep) out.push_back(d.name);
  }
  return out;
}

RetentionPolicy Policy(int64_t last, int64_t best, std::string metric = "eval_loss",
                       RetentionGoal goal = RetentionGoal::kMin) {
  RetentionPolicy p;
  p.keep_last = last;
  p.keep_best = best;
  p.metric = std::move(metric);
  p.goal = goal;
  return p;
}

std::vector<MetricPoint> Losses(std::initializer_list<std::pair<int64_t, double>> points) {
  std::vector<MetricPoint> out;
  int64_t t = 1000;
  for (auto [step, v] : points) out.push_back({"eval_loss", v, t++, step});
  return out;
}

TEST(CheckpointStepTest, IsTheTrailingInteger) {
  EXPECT_EQ(CheckpointStep("checkpoint-500"), 500);
  EXPECT_EQ(CheckpointStep("step_000500"), 500);
  EXPECT_EQ(CheckpointStep("epoch-3"), 3);
  EXPECT_EQ(CheckpointStep("1000"), 1000);
  EXPECT_EQ(CheckpointStep("0"), 0);
  EXPECT_EQ(CheckpointStep("best"), std::nullopt);
  EXPECT_EQ(CheckpointStep("v2-final"), std::nullopt);
  EXPECT_EQ(CheckpointStep(""), std::nullopt);
  EXPECT_EQ(CheckpointStep("x99999999999999999999"), std::nullopt);
}

TEST(DecideRetentionTest, KeepsTheUnionOfLastAndBest) {
  auto cps = Checkpoints(
      {"checkpoint-100", "checkpoint-200", "checkpoint-300", "checkpoint-400", "checkpoint-500"});
  auto history = Losses({{100, 0.9}, {200, 0.3}, {300, 0.5}, {400, 0.6}, {500, 0.7}});
  auto ds = DecideRetention(cps, history, Policy(2, 1));
  EXPECT_EQ(Kept(ds),
            (std::vector<std::string>{"checkpoint-200", "checkpoint-400", "checkpoint-500"}));
  EXPECT_EQ(ds[0].reason, "not among the last 2 or the best 1 by eval_loss");
  EXPECT_EQ(ds[1].reason, "among the best 1 by eval_loss");
  EXPECT_EQ(ds[4].reason, "the newest");
}

TEST(DecideRetentionTest, GoalMaxPicksTheHighest) {
  auto cps = Checkpoints({"a-1", "a-2", "a-3", "a-4"});
  std::vector<MetricPoint> acc{
      {"acc", 0.5, 1, 1}, {"acc", 0.9, 2, 2}, {"acc", 0.7, 3, 3}, {"acc", 0.6, 4, 4}};
  auto ds = DecideRetention(cps, acc, Policy(1, 1, "acc", RetentionGoal::kMax));
  EXPECT_EQ(Kept(ds), (std::vector<std::string>{"a-2", "a-4"}));
}

TEST(DecideRetentionTest, TheValueIsTheLatestPointAtOrBeforeTheStep) {
  // Evaluations at 150, 250 and 350; checkpoint-200 reads 150's value, 300 reads 250's (logged
  // twice: the later point wins), 400 reads 350's.
  auto cps = Checkpoints({"checkpoint-200", "checkpoint-300", "checkpoint-400"});
  auto history = Losses({{150, 0.1}, {250, 0.5}, {250, 0.05}, {350, 0.9}});
  auto ds = DecideRetention(cps, history, Policy(1, 1));
  EXPECT_EQ(Kept(ds), (std::vector<std::string>{"checkpoint-300", "checkpoint-400"}));
}

TEST(DecideRetentionTest, KeepsWhenUnsure) {
  auto cps = Checkpoints({"checkpoint-100", "checkpoint-200", "best", "checkpoint-300",
                          "checkpoint-400", "checkpoint-500"});
  cps[1].uploading = true;
  // No value before step 150; a NaN at 300.
  auto history =
      Losses({{150, 0.5}, {300, std::numeric_limits<double>::quiet_NaN()}, {400, 0.9}, {500, 0.8}});
  auto ds = DecideRetention(cps, history, Policy(1, 1));
  EXPECT_TRUE(ds[0].keep);
  EXPECT_EQ(ds[0].reason, "no eval_loss at or before step 100");
  EXPECT_TRUE(ds[1].keep);
  EXPECT_EQ(ds[1].reason, "being uploaded");
  EXPECT_TRUE(ds[2].keep);
  EXPECT_EQ(ds[2].reason, "no step in its name");
  EXPECT_TRUE(ds[3].keep);   // NaN is no value
  EXPECT_FALSE(ds[4].keep);  // 0.9 at 400: neither last nor best (0.5 at 200)
  EXPECT_TRUE(ds[5].keep);
}

TEST(DecideRetentionTest, NeverDeletesTheNewest) {
  auto cps = Checkpoints({"s-3", "s-1", "s-2"});
  auto ds = DecideRetention(cps, {}, Policy(0, 0));
  EXPECT_EQ(Kept(ds), (std::vector<std::string>{"s-3"}));
  EXPECT_EQ(ds[1].reason, "not among the last 0");
}

TEST(DecideRetentionTest, OnlyLastWithoutMetric) {
  RetentionPolicy p;
  p.keep_last = 2;
  auto ds = DecideRetention(Checkpoints({"c-1", "c-2", "c-3"}), {}, p);
  EXPECT_EQ(Kept(ds), (std::vector<std::string>{"c-2", "c-3"}));
}

TEST(DecideRetentionTest, AHalfSetPolicyDeletesNothing) {
  RetentionPolicy p;
  p.keep_last = 1;
  p.keep_best = 1;  // no metric yet: the best cannot be known, so nothing goes
  EXPECT_FALSE(p.Active());
  auto ds = DecideRetention(Checkpoints({"c-1", "c-2", "c-3"}), {}, p);
  EXPECT_EQ(Kept(ds).size(), 3u);
  EXPECT_FALSE(RetentionPolicy{}.Active());
}

TEST(DecideRetentionTest, EqualValuesPreferTheNewer) {
  auto cps = Checkpoints({"c-100", "c-200", "c-300"});
  auto ds = DecideRetention(cps, Losses({{50, 0.4}}), Policy(0, 1));
  EXPECT_EQ(Kept(ds), (std::vector<std::string>{"c-300"}));  // all read 0.4; the newest wins
}

TEST(ValidateRetentionTagTest, ChecksEachSetting) {
  EXPECT_TRUE(ValidateRetentionTag({"ferry.retention.keep_last", "2"}).ok());
  EXPECT_TRUE(ValidateRetentionTag({"ferry.retention.keep_best", "0"}).ok());
  EXPECT_TRUE(ValidateRetentionTag({"ferry.retention.keep_last", ""}).ok());  // unset
  EXPECT_TRUE(ValidateRetentionTag({"ferry.retention.metric", "eval/loss"}).ok());
  EXPECT_TRUE(ValidateRetentionTag({"ferry.retention.goal", "max"}).ok());
  EXPECT_TRUE(ValidateRetentionTag({"other.tag", "x"}).ok());
  for (const char* v : {"abc", "-1", "1.5", " 2", "+2", "99999999"}) {
    Status s = ValidateRetentionTag({"ferry.retention.keep_last", v});
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << v;
    EXPECT_NE(s.message().find("ferry.retention.keep_last"), std::string::npos);
  }
  EXPECT_FALSE(ValidateRetentionTag({"ferry.retention.goal", "lower"}).ok());
  Status typo = ValidateRetentionTag({"ferry.retention.keep_lst", "2"});
  EXPECT_EQ(typo.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(typo.message().find("not a retention setting"), std::string::npos);
}

TEST(RetentionPolicyFromTagsTest, ReadsTheSettings) {
  EXPECT_FALSE(RetentionPolicyFromTags({{"x", "1"}}).has_value());
  auto p = RetentionPolicyFromTags({{"ferry.retention.keep_last", "3"},
                                    {"ferry.retention.keep_best", "2"},
                                    {"ferry.retention.metric", "acc"},
                                    {"ferry.retention.goal", "max"},
                                    {"ferry.retention.keep_last", ""}});  // ignored: empty
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->keep_last, 3);
  EXPECT_EQ(p->keep_best, 2);
  EXPECT_EQ(p->metric, "acc");
  EXPECT_EQ(p->goal, RetentionGoal::kMax);
  EXPECT_TRUE(p->Active());
  EXPECT_EQ(p->Describe(), "keep the last 3 and the best 2 by acc (max)");
}

}  // namespace
}  // namespace ferry::tracker

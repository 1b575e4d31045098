// The filter grammar of MLflow's run search (docs/semantics/mlflow.md, "Search"), including
// hostile input: unterminated quotes, huge and deeply nested filters.
#include <gtest/gtest.h>

#include <random>

#include "tracker/search.h"

namespace ferry::tracker {
namespace {

Run MakeRun(std::string id, double loss, std::string lr, std::string name = "run") {
  tracker::Run r;
  r.info.run_id = std::move(id);
  r.info.run_name = std::move(name);
  r.info.start_time = 1000;
  r.info.status = RunStatus::kFinished;
  r.info.user_id = "alice";
  r.latest_metrics.push_back({"loss", loss, 5, 1});
  r.params.push_back({"lr", std::move(lr)});
  r.tags.push_back({"x y", "a"});
  r.tags.push_back({"mlflow.user", "alice"});
  return r;
}

bool Match(const Run& run, std::string_view filter) {
  auto clauses = ParseFilter(filter);
  EXPECT_TRUE(clauses.ok()) << filter << ": " << clauses.status().message();
  return clauses.ok() && MatchesFilter(run, *clauses);
}

std::string ErrorOf(std::string_view filter) {
  auto clauses = ParseFilter(filter);
  EXPECT_FALSE(clauses.ok()) << filter;
  if (clauses.ok()) return "";
  EXPECT_EQ(clauses.status().code(), StatusCode::kInvalidArgument);
  return clauses.status().message();
}

TEST(SearchFilterTest, EmptyFilterMatchesEverything) {
  EXPECT_TRUE(Match(MakeRun("a", 0.5, "0.1"), ""));
  EXPECT_TRUE(Match(MakeRun("a", 0.5, "0.1"), "   "));
}

TEST(SearchFilterTest, MetricComparisons) {
  tracker::Run r = MakeRun("a", 0.5, "0.1");
  EXPECT_TRUE(Match(r, "metrics.loss < 1"));
  EXPECT_FALSE(Match(r, "metrics.loss > 1"));
  EXPECT_TRUE(Match(r, "metrics.loss <= 0.5"));
  EXPECT_TRUE(Match(r, "metrics.loss >= 0.5"));
  EXPECT_TRUE(Match(r, "metrics.loss = 0.5"));
  EXPECT_TRUE(Match(r, "metrics.loss != 1e3"));
  EXPECT_TRUE(Match(r, "metric.loss<1"));
  EXPECT_TRUE(Match(r, "metrics.loss > -1.5"));
  EXPECT_TRUE(Match(r, "metrics.loss <> 2"));
}

TEST(SearchFilterTest, MissingKeyNeverMatchesExceptIsNull) {
  tracker::Run r = MakeRun("a", 0.5, "0.1");
  EXPECT_FALSE(Match(r, "metrics.acc != 1"));
  EXPECT_FALSE(Match(r, "params.missing != 'x'"));
  EXPECT_TRUE(Match(r, "tags.missing IS NULL"));
  EXPECT_FALSE(Match(r, "tags.`x y` IS NULL"));
  EXPECT_TRUE(Match(r, "params.lr is not null"));
  EXPECT_TRUE(Match(r, "attributes.end_time IS NULL"));
}

TEST(SearchFilterTest, ParamsAndTagsCompareAsStrings) {
  tracker::Run r = MakeRun("a", 0.5, "0.1");
  EXPECT_TRUE(Match(r, "params.lr = '0.1'"));
  EXPECT_TRUE(Match(r, "params.lr = \"0.1\""));
  EXPECT_FALSE(Match(r, "params.lr = '0.10'"));
  EXPECT_TRUE(Match(r, "param.lr != '0.2'"));
  EXPECT_TRUE(Match(r, "tags.\"x y\" = 'a'"));
  EXPECT_TRUE(Match(r, "tags.`x y` != 'b'"));
  EXPECT_FALSE(Match(r, "tags.\"x y\" != 'a'"));
  EXPECT_TRUE(Match(r, "tags.mlflow.user = 'alice'"));
}

TEST(SearchFilterTest, TheBriefsCompoundFilter) {
  tracker::Run r = MakeRun("a", 0.5, "0.1");
  EXPECT_FALSE(Match(r,
                     "metrics.loss < 1 and params.lr = '0.1' and tags.\"x y\" != 'a' and "
                     "attributes.status = 'FINISHED'"));
  EXPECT_TRUE(Match(r,
                    "metrics.loss < 1 AND params.lr = '0.1' and tags.\"x y\" != 'b' And "
                    "attributes.status = 'FINISHED'"));
}

TEST(SearchFilterTest, LikeAndILike) {
  tracker::Run r = MakeRun("a", 0.5, "0.1", "Big-Model_x");
  EXPECT_TRUE(Match(r, "run_name LIKE '%Model%'"));
  EXPECT_FALSE(Match(r, "run_name LIKE '%model%'"));
  EXPECT_TRUE(Match(r, "run_name ILIKE '%model%'"));
  EXPECT_TRUE(Match(r, "run_name LIKE 'B__-%'"));
  EXPECT_TRUE(Match(r, "params.lr LIKE '0.%'"));
  EXPECT_TRUE(Match(r, "tags.`x y` ILIKE 'A'"));
}

TEST(SearchFilterTest, InAndNotIn) {
  tracker::Run r = MakeRun("abc", 0.5, "0.1");
  EXPECT_TRUE(Match(r, "attributes.run_id IN ('abc', 'def')"));
  EXPECT_FALSE(Match(r, "run_id IN ('def')"));
  EXPECT_TRUE(Match(r, "run_id NOT IN ('def','ghi')"));
  EXPECT_TRUE(Match(r, "params.lr in ('0.1')"));
  EXPECT_TRUE(Match(r, "attributes.status IN ('FINISHED', 'FAILED')"));
}

TEST(SearchFilterTest, NumericAttributes) {
  tracker::Run r = MakeRun("a", 0.5, "0.1");
  EXPECT_TRUE(Match(r, "attributes.start_time = 1000"));
  EXPECT_TRUE(Match(r, "attribute.created >= 999"));
  EXPECT_FALSE(Match(r, "attributes.end_time > 0"));
  r.info.end_time = 2000;
  EXPECT_TRUE(Match(r, "attributes.end_time > 1999"));
  EXPECT_TRUE(Match(r, "attributes.user_id = 'alice'"));
}

TEST(SearchFilterTest, NumbersVersusStrings) {
  EXPECT_NE(ErrorOf("metrics.loss < '1'").find("expected a number for metrics.loss"),
            std::string::npos);
  EXPECT_NE(ErrorOf("params.lr = 0.1").find("expected a quoted string for params.lr"),
            std::string::npos);
  EXPECT_NE(ErrorOf("attributes.start_time = '5'").find("number"), std::string::npos);
  EXPECT_NE(ErrorOf("params.lr > '0.1'").find("not allowed"), std::string::npos);
  EXPECT_NE(ErrorOf("metrics.loss LIKE '1'").find("not allowed"), std::string::npos);
  EXPECT_NE(ErrorOf("metrics.loss < 1x").find("1x"), std::string::npos);
}

TEST(SearchFilterTest, MalformedFiltersNameTheProblem) {
  EXPECT_NE(ErrorOf("metrics.loss < 1 OR metrics.loss > 2").find("OR"), std::string::npos);
  EXPECT_NE(ErrorOf("foo.bar = 1").find("unknown entity 'foo'"), std::string::npos);
  EXPECT_NE(ErrorOf("colour = 'red'").find("unknown attribute 'colour'"), std::string::npos);
  EXPECT_NE(ErrorOf("metrics.loss").find("comparator"), std::string::npos);
  EXPECT_NE(ErrorOf("metrics.loss <").find("expected a value"), std::string::npos);
  EXPECT_NE(ErrorOf("metrics.loss < 1 metrics.acc > 2").find("AND"), std::string::npos);
  EXPECT_NE(ErrorOf("metrics.loss < 1 AND").find("key"), std::string::npos);
  EXPECT_NE(ErrorOf("run_id IN 'a'").find("'('"), std::string::npos);
  EXPECT_NE(ErrorOf("run_id IN ('a'").find("')'"), std::string::npos);
  EXPECT_NE(ErrorOf("run_id NOT 'a'").find("IN"), std::string::npos);
  EXPECT_NE(ErrorOf("tags.x IS 'a'").find("NULL"), std::string::npos);
  EXPECT_NE(ErrorOf("tags. = 'a'").find("key"), std::string::npos);
  EXPECT_NE(ErrorOf("tags.`` = 'a'").find("empty key"), std::string::npos);
}

TEST(SearchFilterTest, UnterminatedQuotes) {
  EXPECT_NE(ErrorOf("params.lr = '0.1").find("unterminated ' quote"), std::string::npos);
  EXPECT_NE(ErrorOf("tags.\"x y = 'a'").find("unterminated"), std::string::npos);
  EXPECT_NE(ErrorOf("tags.`x y = 'a'").find("unterminated ` quote"), std::string::npos);
  EXPECT_NE(ErrorOf("\"").find("unterminated"), std::string::npos);
  EXPECT_NE(ErrorOf("'").find("expected a key"), std::string::npos);
}

TEST(SearchFilterTest, HugeAndNestedInputIsRejectedCheaply) {
  std::string huge = "metrics.loss < 1";
  while (huge.size() <= kMaxFilterLength) huge += " and metrics.loss < 1";
  EXPECT_NE(ErrorOf(huge).find("at most"), std::string::npos);
  std::string nested(10000, '(');
  nested += "metrics.loss < 1";
  nested += std::string(10000, ')');
  ErrorOf(nested);
  // Just under the limit: thousands of clauses parse in linear time.
  std::string many = "metrics.loss < 1";
  while (many.size() + 30 < kMaxFilterLength) many += " and metrics.loss < 1";
  EXPECT_TRUE(Match(MakeRun("a", 0.5, "0.1"), many));
  std::string long_in = "run_id IN ('a'";
  while (long_in.size() + 10 < kMaxFilterLength) long_in += ",'b'";
  EXPECT_TRUE(Match(MakeRun("a", 0.5, "0.1"), long_in + ")"));
}

TEST(SearchFilterTest, RandomBytesNeverCrash) {
  std::mt19937 rng(14);
  const std::string alphabet = "metrics.los<>=!'\"`() ,aAnNdD0123456789-%_IiLlKkEe\\\t";
  for (int i = 0; i < 20000; ++i) {
    std::string s;
    size_t n = rng() % 64;
    for (size_t j = 0; j < n; ++j) s.push_back(alphabet[rng() % alphabet.size()]);
    if (i % 7 == 0) s.push_back(static_cast<char>(rng() % 256));
    auto clauses = ParseFilter(s);
    if (clauses.ok()) MatchesFilter(MakeRun("a", 0.5, "0.1"), *clauses);
  }
}

TEST(LikeMatchTest, Wildcards) {
  EXPECT_TRUE(LikeMatch("", "", false));
  EXPECT_TRUE(LikeMatch("", "%", false));
  EXPECT_FALSE(LikeMatch("", "_", false));
  EXPECT_TRUE(LikeMatch("abc", "a%c", false));
  EXPECT_TRUE(LikeMatch("abc", "%%%", false));
  EXPECT_FALSE(LikeMatch("abc", "a%b", false));
  EXPECT_TRUE(LikeMatch("aXbXc", "%b%c", false));
  EXPECT_TRUE(LikeMatch("ABC", "a_c", true));
  EXPECT_FALSE(LikeMatch("ABC", "a_c", false));
  // The pathological case for naive backtracking stays fast.
  std::string text(5000, 'a');
  std::string pattern;
  for (int i = 0; i < 100; ++i) pattern += "%a";
  pattern += "b";
  EXPECT_FALSE(LikeMatch(text, pattern, false));
}

}  // namespace
}  // namespace ferry::tracker

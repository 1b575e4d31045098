#include "proxy/pypi/names.h"

#include <gtest/gtest.h>

namespace ferry::proxy::pypi {
namespace {

TEST(NormalizeNameTest, FollowsPep503Rule) {
  // The table of the name normalization specification, plus runs and case.
  for (const char* name : {"friendly-bard", "Friendly-Bard", "FRIENDLY-BARD", "friendly.bard",
                           "friendly_bard", "friendly--bard", "FrIeNdLy-._.-bArD"}) {
    EXPECT_EQ(NormalizeName(name), "friendly-bard") << name;
  }
  EXPECT_EQ(NormalizeName("NumPy"), "numpy");
  EXPECT_EQ(NormalizeName("zope.interface"), "zope-interface");
  EXPECT_EQ(NormalizeName("typing_extensions"), "typing-extensions");
  EXPECT_EQ(NormalizeName("a__b..c--d"), "a-b-c-d");
  EXPECT_EQ(NormalizeName("_leading"), "-leading");
  EXPECT_EQ(NormalizeName("torch2"), "torch2");
}

TEST(NormalizeNameTest, ValidNamesAreAsciiLettersDigitsAndSeparators) {
  EXPECT_TRUE(IsValidProjectName("numpy"));
  EXPECT_TRUE(IsValidProjectName("Zope.Interface_2-x"));
  EXPECT_FALSE(IsValidProjectName(""));
  EXPECT_FALSE(IsValidProjectName("a/b"));
  EXPECT_FALSE(IsValidProjectName(".."));  // all separators: valid chars, normalizes to "-"
  EXPECT_FALSE(IsValidProjectName("num py"));
  EXPECT_FALSE(IsValidProjectName("nümpy"));
  EXPECT_FALSE(IsValidProjectName(std::string(201, 'a')));
}

TEST(RouteSimplePathTest, ServesNormalizedNamesWithSlash) {
  auto r = RouteSimplePath("numpy/", "/pypi/simple/");
  EXPECT_EQ(r.kind, SimpleRoute::Kind::kProject);
  EXPECT_EQ(r.project, "numpy");
  EXPECT_EQ(RouteSimplePath("", "/pypi/simple/").kind, SimpleRoute::Kind::kIndex);
}

TEST(RouteSimplePathTest, RedirectsNonNormalizedNamesAndMissingSlash) {
  auto r = RouteSimplePath("NumPy/", "/pypi/simple/");
  EXPECT_EQ(r.kind, SimpleRoute::Kind::kRedirect);
  EXPECT_EQ(r.location, "/pypi/simple/numpy/");
  r = RouteSimplePath("Typing_Extensions", "/pypi/simple/");
  EXPECT_EQ(r.kind, SimpleRoute::Kind::kRedirect);
  EXPECT_EQ(r.location, "/pypi/simple/typing-extensions/");
  r = RouteSimplePath("numpy", "/pypi/simple/");
  EXPECT_EQ(r.kind, SimpleRoute::Kind::kRedirect);
  EXPECT_EQ(r.location, "/pypi/simple/numpy/");
}

TEST(RouteSimplePathTest, RejectsDeeperPathsAndBadNames) {
  for (const char* rest : {"numpy/extra/", "numpy//", "../etc/passwd", "a b/", "/", "%2e%2e/"}) {
    EXPECT_EQ(RouteSimplePath(rest, "/pypi/simple/").kind, SimpleRoute::Kind::kNotFound) << rest;
  }
}

}  // namespace
}  // namespace ferry::proxy::pypi

#include "server/auth.h"

#include <gtest/gtest.h>

#include "base/hash.h"

namespace ferry::server {
namespace {

Headers With(std::string name, std::string value) {
  Headers h;
  h.Add(std::move(name), std::move(value));
  return h;
}

std::string Basic(std::string_view user_and_password) {
  return "Basic " + Base64Encode(AsBytes(user_and_password));
}

TEST(TokenPrincipalTest, WritersReadersAndStrangers) {
  const std::vector<std::string> rw{"writer", "beta-123"}, ro{"reader"};
  EXPECT_EQ(TokenPrincipal("writer", rw, ro), Principal::kWriter);
  EXPECT_EQ(TokenPrincipal("beta-123", rw, ro), Principal::kWriter);
  EXPECT_EQ(TokenPrincipal("reader", rw, ro), Principal::kReader);
  EXPECT_EQ(TokenPrincipal("writ", rw, ro), std::nullopt);
  EXPECT_EQ(TokenPrincipal("writerX", rw, ro), std::nullopt);
  EXPECT_EQ(TokenPrincipal("", rw, ro), std::nullopt);
  EXPECT_EQ(TokenPrincipal("reader", {}, ro), Principal::kReader);  // a read-only server
  EXPECT_EQ(TokenPrincipal("writer", {}, ro), std::nullopt);
}

TEST(FindCredentialTest, BearerBasicAndTheCookie) {
  Credential c = FindCredential(With("Authorization", "Bearer tok-1"));
  EXPECT_EQ(c.source, CredentialSource::kBearer);
  EXPECT_EQ(c.token, "tok-1");
  c = FindCredential(With("Authorization", "bearer   tok-2 "));
  EXPECT_EQ(c.token, "tok-2");
  // pip: http://user:TOKEN@nas/ -> the password; http://TOKEN@nas/ -> the user name.
  c = FindCredential(With("Authorization", Basic("anyone:tok-3")));
  EXPECT_EQ(c.source, CredentialSource::kBasic);
  EXPECT_EQ(c.token, "tok-3");
  EXPECT_EQ(FindCredential(With("Authorization", Basic("tok-4:"))).token, "tok-4");
  EXPECT_EQ(FindCredential(With("Authorization", Basic("tok-5"))).token, "tok-5");
  EXPECT_EQ(FindCredential(With("Authorization", Basic("u:p:with:colons"))).token, "p:with:colons");
  EXPECT_EQ(FindCredential(With("Cookie", "a=1; ferry_token=v1.abc")).source,
            CredentialSource::kCookie);
  for (const std::string& bad : std::vector<std::string>{
           "Basic !!!", "Basic " + Base64Encode(AsBytes(":")), "Bearer ", "Token x", "Bearertok"}) {
    c = FindCredential(With("Authorization", bad));
    EXPECT_EQ(c.source, CredentialSource::kNone) << bad;
    EXPECT_TRUE(c.unreadable_authorization) << bad;
  }
  EXPECT_FALSE(FindCredential(Headers()).unreadable_authorization);
}

TEST(CredentialPrincipalTest, TheCookieHoldsAnHmacAndOnlyReads) {
  const std::vector<std::string> rw{"writer"}, ro{"reader"};
  const std::string cookie = CookieValueFor("writer");
  EXPECT_EQ(cookie.find("writer"), std::string::npos);
  EXPECT_EQ(cookie.substr(0, 3), "v1.");
  EXPECT_EQ(CredentialPrincipal({CredentialSource::kCookie, cookie}, rw, ro), Principal::kReader);
  EXPECT_EQ(CredentialPrincipal({CredentialSource::kCookie, CookieValueFor("reader")}, rw, ro),
            Principal::kReader);
  // The token itself is no cookie, and a cookie is no token.
  EXPECT_EQ(CredentialPrincipal({CredentialSource::kCookie, "writer"}, rw, ro), std::nullopt);
  EXPECT_EQ(CredentialPrincipal({CredentialSource::kBearer, cookie}, rw, ro), std::nullopt);
  // A token taken out of the file takes its cookies with it.
  EXPECT_EQ(CredentialPrincipal({CredentialSource::kCookie, cookie}, {"other"}, ro), std::nullopt);
}

TEST(ConstantTimeEqualsTest, ComparesLengthAndBytes) {
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "ab"));
  EXPECT_FALSE(ConstantTimeEquals("", "a"));
  EXPECT_TRUE(ConstantTimeEquals("", ""));
}

TEST(TokenFromCookieTest, FindsThePercentEncodedValueAmongCookies) {
  EXPECT_EQ(TokenFromCookie("ferry_token=abc"), "abc");
  EXPECT_EQ(TokenFromCookie("a=1; ferry_token=a%2Bb%3D%3D; b=2"), "a+b==");
  EXPECT_EQ(TokenFromCookie(" theme=dark ;ferry_token= tok ;"), "tok");
  EXPECT_EQ(TokenFromCookie("xferry_token=abc; ferry_tokens=x"), std::nullopt);
  EXPECT_EQ(TokenFromCookie("ferry_token="), std::nullopt);
  EXPECT_EQ(TokenFromCookie("ferry_token=%zz"), std::nullopt);
  EXPECT_EQ(TokenFromCookie(""), std::nullopt);
}

TEST(CookieWithoutTokenTest, KeepsTheOtherCookies) {
  EXPECT_EQ(CookieWithoutToken("a=1; ferry_token=x; b=2"), "a=1; b=2");
  EXPECT_EQ(CookieWithoutToken("ferry_token=x"), "");
  EXPECT_EQ(CookieWithoutToken("theme=dark"), "theme=dark");
}

}  // namespace
}  // namespace ferry::server

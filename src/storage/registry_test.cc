#include "storage/registry.h"

#include <gtest/gtest.h>

#include "storage/memory/memory_store.h"

namespace ferry::storage {
namespace {

TEST(RegistryTest, OneStorePerBucketAndProfilePrefix) {
  StoreRegistry registry;
  std::vector<std::string> made;
  registry.Register(Scheme::kS3, [&](const ParsedUrl& url) -> Result<std::shared_ptr<Store>> {
    made.push_back(url.profile + "|" + url.bucket);
    return MakeMemoryStore();
  });
  auto a = registry.Open("s3://bkt/a?x");
  auto b = registry.Open("s3://bkt/b#y");
  auto c = registry.Open("nas:s3://bkt/a");
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->store, b->store);
  EXPECT_NE(a->store, c->store);
  EXPECT_EQ(a->key, "a?x");
  EXPECT_EQ(c->key, "a");
  EXPECT_EQ(made, (std::vector<std::string>{"|bkt", "nas|bkt"}));
}

TEST(RegistryTest, OldParameterFormsAreKeysWithAHint) {
  auto hint = LegacyParameterHint(*ParseUrl("s3://b/k?endpoint=http://h:1&region=x"));
  EXPECT_NE(hint.find("'?endpoint='"), std::string::npos) << hint;
  EXPECT_NE(hint.find("--endpoint-url"), std::string::npos) << hint;
  EXPECT_EQ(LegacyParameterHint(*ParseUrl("s3://b/what?is=this")), "");
  auto secret = LegacyParameterHint(*ParseUrl("s3://b/k?secret_key=S3cretValue"));
  EXPECT_NE(secret.find("never taken from URLs"), std::string::npos) << secret;
  EXPECT_EQ(secret.find("S3cretValue"), std::string::npos) << secret;
  EXPECT_EQ(LegacyParameterHint(*ParseUrl("https://h/f?region=x")), "");
}

}  // namespace
}  // namespace ferry::storage

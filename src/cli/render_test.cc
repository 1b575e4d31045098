#include "cli/render.h"

#include <gtest/gtest.h>

#include "storage/memory/memory_store.h"

namespace ferry::cli {
namespace {

TEST(JsonLine, OneLineInTheGivenOrderWithBadUtf8ReplacedAndSecretsRedacted) {
  Json j = {{"z", 1}, {"a", "x\ny"}, {"name", std::string("bad\xff")}};
  EXPECT_EQ(JsonLine(j), "{\"z\":1,\"a\":\"x\\ny\",\"name\":\"bad\xef\xbf\xbd\"}\n");
  Json e = {{"errors", {"GET 'https://h/x?X-Amz-Signature=abcdef' failed"}}};
  EXPECT_EQ(JsonLine(e),
            "{\"errors\":[\"GET 'https://h/x?X-Amz-Signature=[REDACTED]' failed\"]}\n");
}

TEST(RenderJson, ListedObjectsAndStatKeepTheirFields) {
  auto store = storage::MakeMemoryStore("m");
  storage::ObjectInfo info{
      .key = "d/a.bin", .size = 3, .modified = {}, .etag = "e1", .metadata = {{"k", "v"}}};
  EXPECT_EQ(JsonLine(ListedObjectJson(*store, info)),
            "{\"key\":\"d/a.bin\",\"url\":\"" + store->UrlFor("d/a.bin") +
                "\",\"size\":3,\"modified\":\"-\",\"etag\":\"e1\"}\n");
  EXPECT_EQ(JsonLine(ListedPrefixJson(*store, "d/")),
            "{\"prefix\":\"d/\",\"url\":\"" + store->UrlFor("d/") + "\"}\n");
  Json stat = StatJson(*store, info);
  EXPECT_EQ(stat["modified"], "");
  EXPECT_EQ(stat["metadata"]["k"], "v");
  EXPECT_EQ(stat["key"], "d/a.bin");
}

TEST(RenderJson, FailedCopyNamesItsCauseEvenWithoutAFailedObject) {
  transfer::CopyReport r;
  Json j = CopySummaryJson(r, Status(StatusCode::kNotFound, "ListObjectsV2 failed: NoSuchBucket"));
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["errors"], Json({"ListObjectsV2 failed: NoSuchBucket"}));
  EXPECT_EQ(j["left_out"], Json::array());
  EXPECT_EQ(CopySummaryJson(r, Status())["errors"], Json::array());
}

}  // namespace
}  // namespace ferry::cli

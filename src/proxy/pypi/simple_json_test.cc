#include "proxy/pypi/simple_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "proxy/pypi/simple_html.h"
#include "proxy/pypi/test_util.h"

namespace ferry::proxy::pypi {
namespace {

using testing::Hex64;
using testing::kNumpyUrl;
using testing::ReadFixture;

ProjectPage NumpyFromJson() {
  auto page = ParseProjectJson(ReadFixture("numpy_simple.json"), kNumpyUrl);
  EXPECT_TRUE(page.ok()) << page.status().ToString();
  return *page;
}

TEST(SimpleJsonTest, ParsesPypiOrgProjectPage) {
  ProjectPage page = NumpyFromJson();
  EXPECT_EQ(page.name, "numpy");
  EXPECT_EQ(page.upstream_api_version, "1.1");
  ASSERT_TRUE(page.versions);
  EXPECT_EQ(*page.versions, (std::vector<std::string>{"1.0", "1.21.0", "1.26.4", "2.1.0"}));
  ASSERT_EQ(page.files.size(), 6u);
  EXPECT_TRUE(page.files[0].hashes.empty());
  EXPECT_FALSE(page.files[0].requires_python);  // null
  EXPECT_EQ(*page.files[0].size, 1097120u);
  EXPECT_EQ(page.files[1].yanked, (Yanked{true, "Incorrect wheel tags; use 1.21.1"}));
  EXPECT_EQ(*page.files[1].requires_python, ">=3.7,<3.11");
  EXPECT_EQ(page.files[3].core_metadata, (CoreMetadata{true, {{"sha256", Hex64('d')}}}));
  EXPECT_EQ(*page.files[3].upload_time, "2024-02-05T23:58:36.364226Z");
  EXPECT_EQ(page.files[4].core_metadata, (CoreMetadata{true, {}}));
  EXPECT_EQ(page.files[4].yanked, (Yanked{true, ""}));
  EXPECT_EQ(page.files[5].core_metadata, (CoreMetadata{true, {{"sha256", Hex64('a')}}}));
}

TEST(SimpleJsonTest, HtmlAndJsonFixturesDescribeTheSameFiles) {
  ProjectPage from_json = NumpyFromJson();
  auto from_html = ParseProjectHtml(ReadFixture("numpy_simple.html"), kNumpyUrl, "numpy");
  ASSERT_TRUE(from_html.ok());
  ASSERT_EQ(from_json.files.size(), from_html->files.size());
  for (size_t i = 0; i < from_json.files.size(); ++i) {
    DistFile f = from_json.files[i];
    f.size.reset();  // PEP 700 fields exist only in JSON
    f.upload_time.reset();
    EXPECT_EQ(f, from_html->files[i]) << f.filename;
  }
}

TEST(SimpleJsonTest, RoundTripKeepsEveryField) {
  ProjectPage page = NumpyFromJson();
  std::string json = RenderProjectJson(page);
  auto again = ParseProjectJson(json, kNumpyUrl);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->files, page.files);
  EXPECT_EQ(again->versions, page.versions);
  EXPECT_EQ(again->name, page.name);
  EXPECT_EQ(again->upstream_api_version, "1.1");  // all PEP 700 fields present
  // JSON -> HTML -> model keeps everything HTML can carry.
  auto via_html = ParseProjectHtml(RenderProjectHtml(page), kNumpyUrl, "numpy");
  ASSERT_TRUE(via_html.ok());
  for (size_t i = 0; i < page.files.size(); ++i) {
    DistFile f = page.files[i];
    f.size.reset();
    f.upload_time.reset();
    EXPECT_EQ(via_html->files[i], f);
  }
}

TEST(SimpleJsonTest, RendersPep691ShapeWithoutLegacyMetadataKey) {
  std::string json = RenderProjectJson(NumpyFromJson());
  auto j = nlohmann::json::parse(json);
  EXPECT_EQ(j["meta"]["api-version"], "1.1");
  EXPECT_EQ(j["files"][0]["hashes"], nlohmann::json::object());
  EXPECT_EQ(j["files"][0]["yanked"], false);
  EXPECT_EQ(j["files"][0]["core-metadata"], false);
  EXPECT_EQ(j["files"][1]["yanked"], "Incorrect wheel tags; use 1.21.1");
  EXPECT_EQ(j["files"][1]["requires-python"], ">=3.7,<3.11");
  EXPECT_EQ(j["files"][3]["core-metadata"]["sha256"], Hex64('d'));
  EXPECT_EQ(j["files"][4]["core-metadata"], true);
  EXPECT_EQ(j["files"][4]["yanked"], true);
  EXPECT_EQ(j["files"][3]["size"], 17954297);
  for (const auto& f : j["files"]) {
    EXPECT_FALSE(f.contains("dist-info-metadata"));  // PEP 714: breaks pip 22.3-23.1
    EXPECT_FALSE(f.contains("data-dist-info-metadata"));
  }
}

TEST(SimpleJsonTest, RendersTheNormalizedName) {
  ProjectPage page = NumpyFromJson();
  page.name = "NumPy";
  EXPECT_EQ(nlohmann::json::parse(RenderProjectJson(page))["name"], "numpy");
}

TEST(SimpleJsonTest, ApiVersionIsOnePointZeroWithoutPep700Fields) {
  ProjectPage page = NumpyFromJson();
  page.files[2].size.reset();
  EXPECT_EQ(nlohmann::json::parse(RenderProjectJson(page))["meta"]["api-version"], "1.0");
}

TEST(SimpleJsonTest, ReadsLegacyMetadataKeysAndRelativeUrls) {
  auto page = ParseProjectJson(
      R"({"meta":{"api-version":"1.0"},"name":"x","files":[
        {"filename":"x-1.whl","url":"../../files/x-1.whl","hashes":{"SHA256":")" +
          Hex64('A') + R"("},"dist-info-metadata":{"sha256":")" + Hex64('b') + R"("}},
        {"filename":"x-2.whl","url":"x-2.whl","hashes":{},"data-dist-info-metadata":true},
        {"filename":"x-3.whl","url":"x-3.whl","hashes":{"sha256":"nothex"},"core-metadata":false,
         "dist-info-metadata":true}]})",
      "https://index.example/simple/x/");
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->files.size(), 3u);
  EXPECT_EQ(page->files[0].url, "https://index.example/files/x-1.whl");
  EXPECT_EQ(page->files[0].Sha256(), Hex64('a'));
  EXPECT_EQ(page->files[0].core_metadata, (CoreMetadata{true, {{"sha256", Hex64('b')}}}));
  EXPECT_EQ(page->files[1].core_metadata, (CoreMetadata{true, {}}));
  EXPECT_TRUE(page->files[2].hashes.empty());            // a non-hex "hash" is dropped
  EXPECT_FALSE(page->files[2].core_metadata.available);  // core-metadata wins
  EXPECT_FALSE(page->versions);
}

TEST(SimpleJsonTest, RefusesWhatIsNotAProjectPage) {
  for (const char* text : {"", "[]", "{", "{\"meta\":{\"api-version\":\"1.0\"}}",
                           "{\"meta\":{\"api-version\":\"2.0\"},\"files\":[]}"}) {
    EXPECT_EQ(ParseProjectJson(text, kNumpyUrl).status().code(), StatusCode::kInvalidArgument)
        << text;
  }
}

TEST(SimpleJsonTest, IndexParsesAndRenders) {
  auto list = ParseIndexJson(
      R"({"meta":{"_last-serial":1,"api-version":"1.1"},"projects":[{"_last-serial":3,"name":"numpy"},{"name":"Zope.Interface"},{"nope":1}]})");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->names, (std::vector<std::string>{"numpy", "Zope.Interface"}));
  auto again = ParseIndexJson(RenderIndexJson(*list));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->names, list->names);
  EXPECT_EQ(ParseIndexJson("{\"meta\":{}}").status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ferry::proxy::pypi

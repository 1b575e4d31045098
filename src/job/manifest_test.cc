#include "job/manifest.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace ferry::job {
namespace {

TEST(Manifest, StatesSayHowTheCommandEnded) {
  EXPECT_EQ(ManifestState({.running = true}), "running");
  EXPECT_EQ(ManifestState({.exit_code = 0, .how = "exited 0"}), "succeeded");
  EXPECT_EQ(ManifestState({.exit_code = 3, .how = "exited 3"}), "failed");
  EXPECT_EQ(ManifestState({.exit_code = 137, .how = "killed by signal 9"}), "killed");
  EXPECT_EQ(ManifestState({.exit_code = 143, .how = "killed by signal 15", .interrupted = true}),
            "interrupted");
  EXPECT_EQ(ManifestState({.exit_code = 200, .how = "exited 200"}), "failed");
}

TEST(Manifest, ListsItsFilesWithChecksumsAndTheLineage) {
  RunIdentity id{.job = "j", .attempt = "2", .rank = "0", .host = "h"};
  RunOptions options;
  options.command = {"python", "train.py"};
  ChildState child{.exit_code = 0, .how = "exited 0"};
  std::optional<ResumeSource> from = ResumeSource{.manifest_url = "s3://b/j/1/_ferry/manifest.json",
                                                  .run_id = "j",
                                                  .attempt = "1",
                                                  .written_at = "2026-01-01T00:00:00Z"};
  from->files.resize(3);
  std::string text = ManifestJson(
      {.id = id,
       .options = options,
       .child = child,
       .final_sync = true,
       .written_at = "2026-01-02T00:00:00Z",
       .files = {{"a.pt", 5, 0xdeadbeef, "uploaded"}, {"b.pt", 0, std::nullopt, "unchanged"}},
       .skipped = {},
       .left_out = {},
       .resumed_from = from});
  auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j["state"], "succeeded");
  EXPECT_EQ(j["exit_code"], 0);
  EXPECT_EQ(j["files"][0]["crc32c"], "deadbeef");
  EXPECT_TRUE(j["files"][1]["crc32c"].is_null());
  EXPECT_EQ(j["resumed_from"]["attempt"], "1");
  EXPECT_EQ(j["resumed_from"]["files"], 3);

  auto parsed = ParseManifest(text, "s3://b/j/2/_ferry/manifest.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->run_id, "j");
  EXPECT_EQ(parsed->attempt, "2");
  EXPECT_TRUE(parsed->final);
  ASSERT_EQ(parsed->files.size(), 2u);
  EXPECT_EQ(*parsed->files[0].crc32c, 0xdeadbeefu);
  EXPECT_EQ(ManifestOwner(text)->first, "j");
  EXPECT_EQ(ManifestOwner(text)->second, "2");

  std::string pointer = PointerJson("s3://b/j/2/", "s3://b/j/2/_ferry/manifest.json", id, child,
                                    true, "2026-01-02T00:00:00Z");
  EXPECT_EQ(*PointerManifest(pointer, "p"), "s3://b/j/2/_ferry/manifest.json");
  EXPECT_EQ(nlohmann::json::parse(pointer)["exit_code"], 0);
}

// File names need not be UTF-8 (nor command lines): the manifest is still written (JSON text
// must be UTF-8, so "path" reads with U+FFFD) and resume gets the exact bytes back.
TEST(Manifest, NamesThatAreNotUtf8RoundTrip) {
  RunOptions options;
  options.command = {"python", "train.py", "--tag=caf\xe9"};
  const std::string name = "ckpt/step\xff 1%.pt";
  std::string text = ManifestJson({.id = {.job = "j", .attempt = "1", .rank = "0", .host = "h"},
                                   .options = options,
                                   .child = {.exit_code = 0, .how = "exited 0"},
                                   .final_sync = true,
                                   .written_at = "2026-01-02T00:00:00Z",
                                   .files = {{name, 5, 7, "uploaded"}, {"a.pt", 1, 8, "uploaded"}},
                                   .skipped = {{.path = "x\xfe", .reason = "r"}},
                                   .left_out = {},
                                   .resumed_from = std::nullopt});
  auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j["files"][0]["path"], "ckpt/step\xef\xbf\xbd 1%.pt");
  EXPECT_EQ(j["files"][0]["path_bytes"], "ckpt/step%FF%201%25.pt");
  EXPECT_FALSE(j["files"][1].contains("path_bytes"));
  auto parsed = ParseManifest(text, "m");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  ASSERT_EQ(parsed->files.size(), 2u);
  EXPECT_EQ(parsed->files[0].path, name);
  j["files"][0]["path_bytes"] = "..%2Fescape";  // decoded paths are checked like the others
  EXPECT_FALSE(ParseManifest(j.dump(), "m").ok());
  j["files"][0]["path_bytes"] = "bad%zz";
  EXPECT_FALSE(ParseManifest(j.dump(), "m").ok());
}

TEST(Manifest, RefusesWhatCannotBeResumedSafely) {
  auto parse = [](const std::string& files) {
    return ParseManifest(R"({"format": 2, "run_id": "j", "files": )" + files + "}", "m");
  };
  EXPECT_TRUE(parse(R"([{"path": "a/b.pt", "size": 1}])").ok());
  for (const char* bad :
       {R"([{"path": "../x", "size": 1}])", R"([{"path": "/etc/x", "size": 1}])",
        R"([{"path": "a/../../x", "size": 1}])", R"([{"path": "a/..", "size": 1}])",
        R"([{"size": 1}])", R"([{"path": "a", "size": 1, "crc32c": "zz"}])"}) {
    auto r = parse(bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kDataLoss) << bad;
  }
  auto old = ParseManifest(R"({"run_id": "j", "files": []})", "m");  // format 1
  ASSERT_FALSE(old.ok());
  EXPECT_NE(old.status().message().find("older ferry"), std::string::npos);
  EXPECT_FALSE(PointerManifest("not json", "p").ok());
}

}  // namespace
}  // namespace ferry::job

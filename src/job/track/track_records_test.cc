#include "job/track/track_records.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace ferry::job::track {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path TempDir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

void Write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

TEST(TrackRecordsTest, TrackingRecordRoundTrips) {
  EXPECT_EQ(TrackingRecordName("0"), "tracking.json");
  EXPECT_EQ(TrackingRecordName("3"), "tracking-rank3.json");
  auto r = ParseTrackingRecord(TrackingRecordJson(
      {.url = "http://h:1", .run_id = "abc", .experiment_id = "2", .experiment = "e"}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->url, "http://h:1");
  EXPECT_EQ(r->run_id, "abc");
  EXPECT_EQ(r->experiment, "e");
  EXPECT_FALSE(ParseTrackingRecord("{}"));
  EXPECT_FALSE(ParseTrackingRecord("not json"));
}

TEST(TrackRecordsTest, CheckpointsJsonReferencesEveryFileByUrl) {
  ResumeSource m;
  m.attempt = "1";
  m.written_at = "2026-12-01T10:00:00Z";
  m.state = "running";
  m.files = {{.path = "ckpt-1.pt", .size = 10, .crc32c = 0xabc, .status = "uploaded"},
             {.path = "sub/x.bin", .size = 3, .crc32c = std::nullopt, .status = "kept"}};
  RunIdentity id{.job = "J", .attempt = "1", .rank = "0"};
  json j = json::parse(CheckpointsJson({{.destination = "s3://b/runs/J/1",
                                         .manifest_url = "s3://b/runs/J/1/_ferry/manifest.json",
                                         .manifest = m}},
                                       id));
  EXPECT_EQ(j["attempt"], "1");
  const json& out = j["outputs"][0];
  EXPECT_EQ(out["destination"], "s3://b/runs/J/1/");
  EXPECT_EQ(out["synced_at"], "2026-12-01T10:00:00Z");
  EXPECT_EQ(out["files"][0]["url"], "s3://b/runs/J/1/ckpt-1.pt");
  EXPECT_EQ(out["files"][0]["crc32c"], "00000abc");
  EXPECT_EQ(out["files"][0]["size"], 10);
  EXPECT_TRUE(out["files"][1]["crc32c"].is_null());
  EXPECT_EQ(out["files"][1]["status"], "kept");
}

TEST(TrackRecordsTest, FinalStatusFollowsTheExit) {
  EXPECT_EQ(FinalStatus({.exit_code = 0, .how = "exited 0"}, 0), "FINISHED");
  EXPECT_EQ(FinalStatus({.exit_code = 3, .how = "exited 3"}, 3), "FAILED");
  // Succeeded, but the results did not reach their destination: ferry exits 1.
  EXPECT_EQ(FinalStatus({.exit_code = 0, .how = "exited 0"}, 1), "FAILED");
  EXPECT_EQ(FinalStatus({.exit_code = 143, .how = "exited 143", .interrupted = true}, 143),
            "KILLED");
  EXPECT_EQ(FinalStatus({.exit_code = 137, .how = "killed by signal 9"}, 137), "KILLED");
}

TEST(TrackRecordsTest, OutputLogPerAttempt) {
  EXPECT_EQ(OutputLogArtifact("0"), "ferry/output.log");
  EXPECT_EQ(OutputLogArtifact(""), "ferry/output.log");
  EXPECT_EQ(OutputLogArtifact("2"), "ferry/output-attempt2.log");
}

TEST(TrackRecordsTest, GitCommitFromLooseAndPackedRefsAndDetachedHead) {
  fs::path repo = TempDir("gitcommit");
  const std::string a(40, 'a'), b(40, 'b'), c(40, 'c');
  Write(repo / ".git/HEAD", "ref: refs/heads/main\n");
  Write(repo / ".git/refs/heads/main", a + "\n");
  fs::create_directories(repo / "src/deep");
  EXPECT_EQ(GitCommit((repo / "src/deep").string()), a);
  fs::remove(repo / ".git/refs/heads/main");
  Write(repo / ".git/packed-refs", "# pack-refs with: peeled\n" + b + " refs/heads/main\n");
  EXPECT_EQ(GitCommit(repo.string()), b);
  Write(repo / ".git/HEAD", c + "\n");
  EXPECT_EQ(GitCommit(repo.string()), c);
  // A worktree: .git is a file naming its gitdir, refs in the common dir.
  fs::path wt = TempDir("gitcommit-wt");
  Write(repo / ".git/worktrees/wt/HEAD", "ref: refs/heads/feature\n");
  Write(repo / ".git/worktrees/wt/commondir", "../..\n");
  Write(repo / ".git/refs/heads/feature", a + "\n");
  Write(wt / ".git", "gitdir: " + (repo / ".git/worktrees/wt").string() + "\n");
  EXPECT_EQ(GitCommit(wt.string()), a);
  fs::remove_all(repo);
  fs::remove_all(wt);
}

TEST(TrackRecordsTest, RunTagsNameTheJobAndRedactTheCommand) {
  RunPlan plan;
  plan.id = {.job = "J", .attempt = "2", .rank = "0"};
  plan.options.command = {"/usr/bin/python3", "train.py",
                          "--aws-secret-access-key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"};
  auto tags = RunTags(plan, "node1", "alice", "/");
  std::map<std::string, std::string> t(tags.begin(), tags.end());
  EXPECT_EQ(t["ferry.host"], "node1");
  EXPECT_EQ(t["ferry.attempt"], "2");
  EXPECT_EQ(t["mlflow.source.name"], "python3");
  EXPECT_EQ(t["mlflow.user"], "alice");
  EXPECT_EQ(t["ferry.command"].find("wJalrXUtnFEMI"), std::string::npos) << t["ferry.command"];
}

TEST(TrackRecordsTest, CommandLineSecretsAreRedacted) {
  EXPECT_EQ(RedactCommandLine({"train.py", "--lr=0.1", "--api-key=abc", "--token", "xyz",
                               "HF_TOKEN=hf_1", "--keep", "v"}),
            "train.py --lr=0.1 --api-key=[REDACTED] --token [REDACTED] HF_TOKEN=[REDACTED] "
            "--keep v");
}

TEST(TrackRecordsTest, AttemptStartedTagNamesTheAttempt) {
  EXPECT_EQ(AttemptStartedTag("2"), "ferry.attempt.2.started_ms");
  EXPECT_EQ(AttemptStartedTag(""), "ferry.attempt.0.started_ms");
}

}  // namespace
}  // namespace ferry::job::track

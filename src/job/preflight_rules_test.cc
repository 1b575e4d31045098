#include "job/preflight_rules.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace ferry::job {
namespace {

RunOptions With(std::vector<std::pair<std::string, std::string>> inputs,
                std::vector<std::pair<std::string, std::string>> outputs) {
  RunOptions o;
  o.inputs = std::move(inputs);
  o.outputs = std::move(outputs);
  return o;
}

std::string SidesError(std::vector<std::pair<std::string, std::string>> inputs,
                       std::vector<std::pair<std::string, std::string>> outputs) {
  auto r = CheckRunSides(With(std::move(inputs), std::move(outputs)));
  if (r.ok()) return "ok";
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  return r.status().message();
}

TEST(IsLocalSide, PathsAndFileUrlsAreLocalAnythingWithASchemeIsNot) {
  for (const char* local : {"/scratch/out", "out", "./s3:/b", "file:///scratch/out", "file:/x"}) {
    EXPECT_TRUE(IsLocalSide(local)) << local;
  }
  for (const char* url : {"s3://b/x/", "S3://b/x", "gs://b/x", "https://h/x", "s3:/b/x", "s3:b",
                          "file://host/x", ""}) {
    EXPECT_FALSE(IsLocalSide(url)) << url;
  }
}

TEST(CheckRunSides, SwappedOutputShowsTheRightOrder) {
  // --out splits at the first '=': the swapped flag arrives as ("s3://b/x/", "/scratch/out").
  EXPECT_EQ(SidesError({}, {{"s3://b/x/", "/scratch/out"}}),
            "--out 's3://b/x/=/scratch/out': the sides look swapped (the part before '=' must be "
            "a local directory); write --out /scratch/out=s3://b/x/ (LOCAL_DIR=DST_URL)");
  // A URL with '=' in it was cut at its first '=': the right order is still shown whole.
  EXPECT_EQ(SidesError({}, {{"s3://b/x/date", "2024-01-01=/scratch/out"}}),
            "--out 's3://b/x/date=2024-01-01=/scratch/out': the sides look swapped (the part "
            "before '=' must be a local directory); write --out "
            "/scratch/out=s3://b/x/date=2024-01-01 (LOCAL_DIR=DST_URL)");
  // Not swapped, just not local.
  EXPECT_EQ(SidesError({}, {{"s3://b/x/", "s3://b/y/"}}),
            "--out 's3://b/x/=s3://b/y/': the part before '=' must be a local directory "
            "(LOCAL_DIR=DST_URL)");
}

TEST(CheckRunSides, SwappedInputShowsTheRightOrder) {
  // --in splits at the last '='.
  EXPECT_EQ(SidesError({{"/data", "s3://b/ds"}}, {}),
            "--in '/data=s3://b/ds': the sides look swapped (the part after '=' must be a local "
            "directory); write --in s3://b/ds=/data (SRC_URL=LOCAL_DIR)");
  EXPECT_EQ(SidesError({{"/data=s3://b/ds/date", "2024-01-01"}}, {}),
            "--in '/data=s3://b/ds/date=2024-01-01': the sides look swapped (the part after '=' "
            "must be a local directory); write --in s3://b/ds/date=2024-01-01=/data "
            "(SRC_URL=LOCAL_DIR)");
  EXPECT_EQ(SidesError({{"s3://b/ds", "s3://b/other"}}, {}),
            "--in 's3://b/ds=s3://b/other': the part after '=' must be a local directory "
            "(SRC=LOCAL_DIR)");
}

TEST(CheckRunSides, UrlsAreCheckedStrictlyAndRightSidesPass) {
  EXPECT_EQ(
      SidesError({{"s3://b/ds/date=2024-01-01", "/scratch/data"}, {"/nfs/data", "/scratch/local"}},
                 {{"/scratch/out", "s3://b/runs/{job}/"}, {"/scratch/o2", "/nfs/results"}}),
      "ok");
  EXPECT_EQ(SidesError({}, {{"/scratch/out", "s3:/b/typo/"}}),
            "--out: malformed URL 's3:/b/typo/': write s3://BUCKET/KEY (for a local path that "
            "starts with 's3:', write ./s3:/b/typo/)");
  EXPECT_EQ(SidesError({{"gs://b/x", "/scratch/data"}}, {}).rfind("--in: unknown URL scheme", 0),
            0u);
}

TEST(CheckRunSides, FileUrlsOnTheLocalSideBecomePaths) {
  auto r = CheckRunSides(
      With({{"s3://b/ds/", "file:///scratch/data/"}}, {{"file:///scratch/out", "s3://b/runs/"}}));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->inputs[0].second, "/scratch/data/");
  EXPECT_EQ(r->outputs[0].first, "/scratch/out");
  EXPECT_EQ(r->outputs[0].second, "s3://b/runs/");  // destinations are the store's business
}

std::string Lexical(const std::string& dir) {
  std::string out = std::filesystem::path(dir).lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

std::string ApartError(std::vector<std::pair<std::string, std::string>> inputs,
                       std::vector<std::pair<std::string, std::string>> outputs) {
  Status s = CheckInputsApartFromOutputs(With(std::move(inputs), std::move(outputs)), Lexical);
  if (s.ok()) return "ok";
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  return s.message();
}

TEST(CheckInputsApartFromOutputs, NestedOrEqualDirectoriesAreUsageErrors) {
  EXPECT_EQ(ApartError({{"s3://b/ds/", "/scratch/data"}}, {{"/scratch/data/out", "s3://b/r/"}}),
            "--out '/scratch/data/out=s3://b/r/': the output directory '/scratch/data/out' is "
            "inside the input directory '/scratch/data' of --in 's3://b/ds/=/scratch/data': "
            "results would mix with the staged-in data; give each its own directory");
  EXPECT_EQ(ApartError({{"s3://b/ds/", "/scratch/out/data/"}}, {{"/scratch/out", "s3://b/r/"}}),
            "--in 's3://b/ds/=/scratch/out/data/': the input directory '/scratch/out/data' is "
            "inside the output directory '/scratch/out' of --out '/scratch/out=s3://b/r/': every "
            "sync would upload the staged-in data as results; give each its own directory");
  EXPECT_EQ(ApartError({{"s3://b/ds/", "/scratch/x/"}}, {{"/scratch/./x", "s3://b/r/"}}),
            "--in 's3://b/ds/=/scratch/x/' and --out '/scratch/./x=s3://b/r/' name the same "
            "directory '/scratch/x': every sync would upload the staged-in data as results; give "
            "each its own directory");
  EXPECT_NE(ApartError({{"s3://b/ds/", "/"}}, {{"/scratch/out", "s3://b/r/"}}), "ok");
}

TEST(CheckInputsApartFromOutputs, SiblingsAndPrefixNamesAreFine) {
  EXPECT_EQ(ApartError({{"s3://b/ds/", "/scratch/data"}, {"s3://b/more/", "/scratch/data"}},
                       {{"/scratch/data-out", "s3://b/r/"}, {"/scratch/out", "s3://b/r2/"}}),
            "ok");
  // Two outputs may nest (a subset synced elsewhere): only inputs are compared with outputs.
  EXPECT_EQ(ApartError({}, {{"/scratch/out", "s3://b/r/"}, {"/scratch/out/logs", "s3://b/l/"}}),
            "ok");
}

TEST(ResolveLocalDir, AbsoluteNormalisedAndWithoutATrailingSlash) {
  EXPECT_EQ(ResolveLocalDir("/proc/self/../1/"), "/proc/1");
  EXPECT_EQ(ResolveLocalDir("/nonexistent-ferry/a/./b/"), "/nonexistent-ferry/a/b");
  EXPECT_EQ(ResolveLocalDir("/"), "/");
}

MountVerdict Verdict(Persistence p, std::string kind) {
  return {.kind = std::move(kind), .persistence = p, .verdict = "lost at reboot", .notes = {}};
}

TEST(OutputPersistence, FleetingDirWithAFleetingLocalDestinationIsAnError) {
  auto ram = Verdict(Persistence::kRam, "tmpfs (RAM)");
  auto overlay = Verdict(Persistence::kContainer, "overlay (container writable layer)");
  auto disk = Verdict(Persistence::kNode, "local disk (ext4 on /dev/vda)");
  auto f = OutputPersistence("/dev/shm/out", ram, "/tmp/results/", overlay);
  ASSERT_TRUE(f);
  EXPECT_TRUE(f->error);
  EXPECT_EQ(f->line,
            "output /dev/shm/out: it is on tmpfs (RAM) and its destination /tmp/results/ is local "
            "and on overlay (container writable layer): the results would not outlive the job; "
            "send them to a remote URL (s3://...) or a persistent filesystem");
  // The warning ferry always gave for a fleeting local destination stays a warning.
  f = OutputPersistence("/scratch/out", disk, "/dev/shm/results/", ram);
  ASSERT_TRUE(f);
  EXPECT_FALSE(f->error);
  EXPECT_EQ(f->line, "output destination /dev/shm/results/ is on tmpfs (RAM): lost at reboot");
  // A remote destination, or a persistent local one, is where results belong.
  EXPECT_FALSE(OutputPersistence("/dev/shm/out", ram, "s3://b/r/", std::nullopt));
  EXPECT_FALSE(OutputPersistence("/dev/shm/out", ram, "/nfs/results/",
                                 Verdict(Persistence::kNetwork, "NFS (nfs4)")));
}

TEST(TmpdirTooLong, RoomForMultiprocessingsSocketPathOrAWarning) {
  EXPECT_FALSE(TmpdirTooLong("/tmp"));
  EXPECT_FALSE(TmpdirTooLong(std::string(75, 'a')));  // 75 + 32 = 107: the longest that fits
  auto line = TmpdirTooLong("/" + std::string(75, 'a'));
  ASSERT_TRUE(line);
  EXPECT_NE(line->find("is 76 characters"), std::string::npos) << *line;
  EXPECT_NE(line->find("set a shorter TMPDIR"), std::string::npos) << *line;
}

}  // namespace
}  // namespace ferry::job

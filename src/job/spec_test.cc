#include "job/spec.h"

#include <gtest/gtest.h>

namespace ferry::job {
namespace {

TEST(JobSpec, ReadsEverySetting) {
  auto o = ParseJobSpec(R"(
command: [python3, train.py, --epochs, "10"]
inputs:
  - {src: "s3://b/data/", dir: /scratch/data}
  - "s3://b/x/date=2024-01-01=/scratch/x"
outputs:
  - dir: /scratch/out
    dst: "s3://b/runs/{job}/{attempt}/"
interval: 60
grace: 5
strict: true
preflight: false
delete_after_upload: "ckpt-*.pt"
trigger_file: /scratch/sync
follow_links: true
signal_group: true
)",
                        "job.yaml");
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->command, (std::vector<std::string>{"python3", "train.py", "--epochs", "10"}));
  ASSERT_EQ(o->inputs.size(), 2u);
  EXPECT_EQ(o->inputs[0], (std::pair<std::string, std::string>{"s3://b/data/", "/scratch/data"}));
  // A string entry splits SRC=DIR at the last '=', like --in.
  EXPECT_EQ(o->inputs[1].first, "s3://b/x/date=2024-01-01");
  EXPECT_EQ(o->outputs[0].second, "s3://b/runs/{job}/{attempt}/");
  EXPECT_EQ(o->interval.count(), 60);
  EXPECT_EQ(o->grace.count(), 5);
  EXPECT_TRUE(o->strict);
  EXPECT_TRUE(o->skip_preflight);
  EXPECT_EQ(o->delete_after_upload, std::vector<std::string>{"ckpt-*.pt"});
  EXPECT_EQ(o->trigger_file, "/scratch/sync");
  EXPECT_TRUE(o->follow_symlinks);
  EXPECT_TRUE(o->signal_group);
  EXPECT_FALSE(ParseJobSpec("grace: 5\n", "job.yaml")->signal_group);  // the main process only
}

TEST(JobSpec, JsonIsYamlToo) {
  auto o = ParseJobSpec(R"({"command": "python3 train.py > log.txt", "interval": 10})", "j.json");
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->command, (std::vector<std::string>{"/bin/sh", "-c", "python3 train.py > log.txt"}));
}

TEST(JobSpec, TrackIsAUrlOrAMapping) {
  auto url = ParseJobSpec("track: http://nas:8780\n", "job.yaml");
  ASSERT_TRUE(url.ok()) << url.status().message();
  EXPECT_EQ(url->track.url, "http://nas:8780");
  EXPECT_FALSE(url->track.system_metrics_interval);
  auto map = ParseJobSpec(R"(
track: {url: "http://nas:8780", experiment: resnet, run_name: r1, system_metrics_interval: 0}
)",
                          "job.yaml");
  ASSERT_TRUE(map.ok()) << map.status().message();
  EXPECT_EQ(map->track.experiment, "resnet");
  EXPECT_EQ(map->track.run_name, "r1");
  EXPECT_EQ(map->track.system_metrics_interval, 0);
  for (const char* bad : {"track: {experiment: e}\n", "track: {url: u, colour: red}\n",
                          "track: [a]\n", "track: {url: u, system_metrics_interval: -1}\n"}) {
    auto o = ParseJobSpec(bad, "job.yaml");
    ASSERT_FALSE(o.ok()) << bad;
    EXPECT_NE(o.status().message().find("'track"), std::string::npos) << o.status().message();
  }
}

TEST(JobSpec, ErrorsNameTheFileAndTheProblem) {
  auto typo = ParseJobSpec("intervall: 5\n", "job.yaml");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("job spec 'job.yaml': unknown key 'intervall'"),
            std::string::npos);
  auto bad = ParseJobSpec("interval: soon\n", "job.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("line 1"), std::string::npos) << bad.status().message();
  auto syntax = ParseJobSpec("outputs: [dir: /a\n", "job.yaml");
  EXPECT_FALSE(syntax.ok());
  auto pair = ParseJobSpec("outputs: [\"/only-a-dir\"]\n", "job.yaml");
  ASSERT_FALSE(pair.ok());
  EXPECT_NE(pair.status().message().find("DIR=DST"), std::string::npos) << pair.status().message();
  auto missing = LoadJobSpec("/nonexistent/job.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/job.yaml"), std::string::npos);
}

}  // namespace
}  // namespace ferry::job

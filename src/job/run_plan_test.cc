#include "job/run_plan.h"

#include <gtest/gtest.h>

#include <regex>

namespace ferry::job {
namespace {

TEST(ExpandTemplate, ReplacesEveryKnownFieldAndRejectsOthers) {
  RunIdentity id{.job = "j1", .attempt = "2", .rank = "3", .host = "h", .date = "2026-01-02"};
  EXPECT_EQ(*ExpandTemplate("s3://b/{job}/{attempt}/{rank}-{host}-{date}/", id),
            "s3://b/j1/2/3-h-2026-01-02/");
  EXPECT_EQ(*ExpandTemplate("/plain/dir", id), "/plain/dir");
  auto bad = ExpandTemplate("s3://b/{nope}/", id);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(),
            "unknown template field '{nope}' in 's3://b/{nope}/' (known: {job} {attempt} {rank} "
            "{host} {date})");
  EXPECT_EQ(ExpandTemplate("s3://b/{job", id).status().message(), "unclosed '{' in 's3://b/{job'");
}

TEST(DetectIdentity, TakesTheSchedulersVariablesInOrder) {
  MapEnvironment env({{"SLURM_JOB_ID", "77"},
                      {"JOB_ID", "x"},
                      {"SLURM_RESTART_COUNT", "1"},
                      {"SLURM_PROCID", "4"}});
  RunIdentity id = DetectIdentity(env);
  EXPECT_EQ(id.job, "77");
  EXPECT_EQ(id.attempt, "1");
  EXPECT_EQ(id.rank, "4");
  EXPECT_FALSE(id.host.empty());
  EXPECT_TRUE(std::regex_match(id.date, std::regex(R"(\d{4}-\d{2}-\d{2})")));
  env.Set("FERRY_RUN_ID", "mine");
  env.Set("RANK", "0");
  EXPECT_EQ(DetectIdentity(env).job, "mine");
  EXPECT_EQ(DetectIdentity(env).rank, "0");
  MapEnvironment array(
      {{"SLURM_JOB_ID", "1236"}, {"SLURM_ARRAY_JOB_ID", "1234"}, {"SLURM_ARRAY_TASK_ID", "2"}});
  EXPECT_EQ(DetectIdentity(array).job, "1234_2");  // as squeue names an array task
  array.Set("FERRY_RUN_ID", "sweep-2");
  EXPECT_EQ(DetectIdentity(array).job, "sweep-2");
  MapEnvironment pod({{"KUBERNETES_SERVICE_HOST", "10.0.0.1"}, {"HOSTNAME", "train-abc12"}});
  EXPECT_EQ(DetectIdentity(pod).job, "train-abc12");
  EXPECT_EQ(DetectIdentity(pod).attempt, "");  // counted from the job's records
  RunIdentity generated = DetectIdentity(MapEnvironment());
  EXPECT_TRUE(std::regex_match(generated.job, std::regex(R"(\d{8}-\d{6}-[0-9a-f]{6})")))
      << generated.job;
  EXPECT_NE(DetectIdentity(MapEnvironment()).job, generated.job);  // 24 random bits apart
}

TEST(PlanRun, ExpandsDestinationsAndPlacesTheTriggerFile) {
  RunOptions o;
  o.outputs = {{"/scratch/out", "s3://b/runs/{job}/"}, {"/scratch/logs", "s3://b/logs/"}};
  MapEnvironment env({{"FERRY_RUN_ID", "r1"}, {"TMPDIR", "/var/tmp"}});
  auto plan = PlanRun(o, env, 1234);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->options.trigger_file, "/var/tmp/ferry-sync-1234");
  ASSERT_EQ(plan->outputs.size(), 2u);
  EXPECT_EQ(plan->outputs[0].dir, "/scratch/out");
  EXPECT_TRUE(NeedsAttemptCount(*plan));
  EXPECT_EQ(plan->outputs[0].url, "");  // not before the attempt is known
  EXPECT_EQ(plan->outputs[0].tmpl, "s3://b/runs/{job}/");
  EXPECT_EQ(plan->outputs[0].records_key, "runs/r1/_ferry/");
  EXPECT_EQ(plan->outputs[0].pointer_name, "latest.json");
  EXPECT_EQ(plan->outputs[1].records_key, "logs/_ferry/jobs/r1/");
  EXPECT_EQ(plan->outputs[1].pointer_name, "latest-out1.json");
  ASSERT_TRUE(AssignAttempt(*plan, 4).ok());
  EXPECT_EQ(plan->id.attempt, "4");
  EXPECT_EQ(plan->outputs[0].url, "s3://b/runs/r1/");
  // A scheduler's restart count is taken as it is.
  env.Set("SLURM_RESTART_COUNT", "2");
  o.outputs[0].second = "s3://b/runs/{job}/{attempt}/";
  auto slurm = PlanRun(o, env, 1);
  ASSERT_TRUE(slurm.ok());
  EXPECT_FALSE(NeedsAttemptCount(*slurm));
  EXPECT_EQ(slurm->outputs[0].url, "s3://b/runs/r1/2/");
  o.trigger_file = "/x/sync-now";
  EXPECT_EQ(PlanRun(o, env, 1)->options.trigger_file, "/x/sync-now");
  o.outputs.push_back({"/o", "s3://b/{bad}/"});
  EXPECT_EQ(PlanRun(o, env, 1).status().code(), StatusCode::kInvalidArgument);
}

TEST(PlanRun, ResumesTheOutputWhoseDirectoryIsTheResumeDirectory) {
  MapEnvironment env({{"FERRY_RUN_ID", "r1"}, {"TMPDIR", "/tmp"}});
  RunOptions o;
  o.resume_dir = "/ckpt";
  auto none = PlanRun(o, env, 1);
  ASSERT_FALSE(none.ok());  // nothing to resume from
  EXPECT_EQ(none.status().code(), StatusCode::kInvalidArgument);
  o.outputs = {{"/logs", "s3://b/logs/{job}/"}, {"/ckpt/", "s3://b/ckpt/{job}/{attempt}/"}};
  auto plan = PlanRun(o, env, 1);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->resume_output, 1u);
  EXPECT_EQ(plan->outputs[1].dir, "/ckpt");
  o.resume_dir = "/elsewhere";
  EXPECT_EQ(PlanRun(o, env, 1)->resume_output, 0u);
}

TEST(DetectIdentity, SaysWhereTheJobIdCameFromAndWhetherItIsStable) {
  MapEnvironment slurm;
  slurm.Set("SLURM_JOB_ID", "77");
  EXPECT_EQ(DetectIdentity(slurm).job_from, "SLURM_JOB_ID");
  EXPECT_TRUE(DetectIdentity(slurm).job_stable);
  MapEnvironment pod({{"KUBERNETES_SERVICE_HOST", "10.0.0.1"}, {"HOSTNAME", "train-abc12"}});
  EXPECT_FALSE(DetectIdentity(pod).job_stable);  // a Job's retried pod has another name
  EXPECT_FALSE(DetectIdentity(MapEnvironment()).job_stable);
  EXPECT_EQ(DetectIdentity(MapEnvironment()).job_from, "generated");
}

TEST(PlanRun, JobFlagNamesTheJobAndResumeWithoutAStableIdIsAWarning) {
  MapEnvironment env;
  env.Set("TMPDIR", "/tmp");
  RunOptions o;
  o.outputs = {{"/ckpt", "s3://b/ckpt/{job}/{attempt}/"}};
  o.resume_dir = "/ckpt";
  auto generated = PlanRun(o, env, 1);
  ASSERT_TRUE(generated.ok());
  auto warning = UnstableResumeWarning(*generated);
  ASSERT_TRUE(warning.has_value());
  EXPECT_NE(warning->find("--resume without a stable job id: this start is job '" +
                          generated->id.job + "' (generated)"),
            std::string::npos)
      << *warning;
  EXPECT_NE(warning->find("give --job NAME"), std::string::npos);

  o.job = "bert-pretrain";
  auto named = PlanRun(o, env, 1);
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(named->id.job, "bert-pretrain");
  EXPECT_EQ(named->id.job_from, "--job");
  EXPECT_FALSE(UnstableResumeWarning(*named).has_value());
  EXPECT_EQ(named->outputs[0].records_key, "ckpt/bert-pretrain/_ferry/");

  env.Set("FERRY_RUN_ID", "from-env");  // --job wins over the environment
  EXPECT_EQ(PlanRun(o, env, 1)->id.job, "bert-pretrain");
  o.resume_dir.clear();
  o.job.clear();
  MapEnvironment none;
  none.Set("TMPDIR", "/tmp");
  EXPECT_FALSE(UnstableResumeWarning(*PlanRun(o, none, 1)).has_value());  // no --resume

  for (const char* bad : {"", "a/b", "..", "-x", "x y", "\u00e9t\u00e9"}) {
    o.job = bad;
    if (std::string(bad).empty()) continue;  // empty means "from the environment"
    auto r = PlanRun(o, env, 1);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("--job '"), std::string::npos);
  }
  EXPECT_FALSE(CheckJobName(std::string(129, 'a')).ok());
  EXPECT_TRUE(CheckJobName("sweep_2.lr-3e-4").ok());
}

TEST(CommandEnvironment, NamesOutputsInputsAndTheTrigger) {
  RunPlan plan;
  plan.id.job = "r1";
  plan.options.trigger_file = "/tmp/t";
  plan.options.inputs = {{"s3://b/ds/", "data"}};
  plan.id.attempt = "3";
  plan.id.rank = "0";
  plan.outputs = {{.dir = "/o0", .url = "s3://b/o0/"}, {.dir = "/o1", .url = "s3://b/o1/"}};
  std::vector<std::pair<std::string, std::string>> want = {{"FERRY_RUN_ID", "r1"},
                                                           {"FERRY_ATTEMPT", "3"},
                                                           {"FERRY_RANK", "0"},
                                                           {"FERRY_OUTPUT_0", "/o0"},
                                                           {"FERRY_OUTPUT_URL_0", "s3://b/o0/"},
                                                           {"FERRY_OUTPUT_1", "/o1"},
                                                           {"FERRY_OUTPUT_URL_1", "s3://b/o1/"},
                                                           {"FERRY_OUTPUT", "/o0"},
                                                           {"FERRY_SYNC_TRIGGER", "/tmp/t"},
                                                           {"FERRY_INPUT_0", "data"}};
  EXPECT_EQ(CommandEnvironment(plan), want);
  plan.options.resume_dir = "/o0";
  auto env = CommandEnvironment(plan);
  EXPECT_EQ(env[env.size() - 2], (std::pair<std::string, std::string>{"FERRY_RESUME_DIR", "/o0"}));
  EXPECT_EQ(env.back(), (std::pair<std::string, std::string>{"FERRY_RESUMED", "0"}));
  plan.resumed_from =
      ResumeSource{.manifest_url = "s3://b/o0/_ferry/manifest.json", .attempt = "2"};
  env = CommandEnvironment(plan);
  EXPECT_EQ(env.back(), (std::pair<std::string, std::string>{"FERRY_RESUME_MANIFEST",
                                                             "s3://b/o0/_ferry/manifest.json"}));
  EXPECT_EQ(env[env.size() - 2],
            (std::pair<std::string, std::string>{"FERRY_RESUME_ATTEMPT", "2"}));
}

}  // namespace
}  // namespace ferry::job

// ferry sysmetrics [--json] [--wait MS]: one sample of the system metrics `ferry run --track`
// logs (src/sysmetrics/sampler.h), to check what a machine reports, NVML's GPUs included, in
// one command.

#include <fmt/format.h>

#include <thread>

#include "cli/command.h"
#include "cli/render.h"
#include "sysmetrics/sampler.h"

namespace ferry::cli {

namespace {

struct SysmetricsCliOptions {
  bool json = false;
  int wait_ms = 1000;
  std::string disk = "/";
};

Status RunSysmetrics(Context& ctx, const SysmetricsCliOptions& o) {
  if (o.wait_ms < 0) return Usage(ctx, InvalidArgument("--wait must be >= 0"));
  sysmetrics::SystemSampler sampler({.disk_path = o.disk});
  // Rates and CPU utilisation are measured over the wait.
  std::this_thread::sleep_for(std::chrono::milliseconds(o.wait_ms));
  auto metrics = sampler.Sample();
  if (o.json) {
    Json values = Json::object();
    for (const auto& m : metrics) values[m.name] = m.value;
    return PrintJson(ctx, Json{{"gpus", sampler.gpu_note()}, {"metrics", values}});
  }
  std::string text = "gpus: " + sampler.gpu_note() + "\n";
  for (const auto& m : metrics) text += fmt::format("{} {:.3f}\n", m.name, m.value);
  return Print(ctx, text);
}

}  // namespace

void AddSysmetricsCommand(CLI::App& app, Action& action) {
  auto o = std::make_shared<SysmetricsCliOptions>();
  auto* cmd = app.add_subcommand(
      "sysmetrics",
      "Print one sample of the system metrics ferry run --track logs (CPU, memory, "
      "disk, network, NVIDIA GPUs through NVML when present)");
  cmd->add_flag("--json", o->json, "One JSON object: {\"gpus\": NOTE, \"metrics\": {NAME: VALUE}}");
  cmd->add_option("--wait", o->wait_ms,
                  "Milliseconds between the baseline and the sample "
                  "(rates, CPU; default 1000)");
  cmd->add_option("--disk", o->disk, "The filesystem whose usage is reported (default /)");
  cmd->callback([o, &action] { action = [o](Context& ctx) { return RunSysmetrics(ctx, *o); }; });
}

}  // namespace ferry::cli

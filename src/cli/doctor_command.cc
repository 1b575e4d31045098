// ferry doctor PATH...: what kind of storage holds each path, whether data there outlives the
// container, the pod and the machine, free space, and small-file and sequential speed.

#include <fmt/format.h>

#include "base/strings.h"
#include "cli/command.h"
#include "cli/render.h"
#include "job/doctor.h"
#include "job/doctor_url.h"

namespace ferry::cli {

namespace {

struct DoctorCliOptions {
  std::vector<std::string> paths;
  bool json = false;
  bool no_bench = false;
};

std::string Human(const job::PathDiagnosis& d) {
  std::string out =
      fmt::format("{}\n  storage:     {}\n  mount:       {} on {} ({})\n", d.path, d.verdict.kind,
                  d.mount.source, d.mount.mount_point, d.mount.fstype);
  out += fmt::format("  persistence: {} — {}\n", job::PersistenceName(d.verdict.persistence),
                     d.verdict.verdict);
  for (const auto& n : d.verdict.notes) out += "  note:        " + n + "\n";
  if (d.total_bytes) {
    out += fmt::format("  space:       {} free of {}\n", HumanBytes(d.free_bytes),
                       HumanBytes(d.total_bytes));
  }
  if (d.measured) {
    out += fmt::format("  small files: {:.0f} create+stat+read+delete of 4 KiB per second\n",
                       d.measured->small_file_ops_per_s);
    out += fmt::format("  sequential:  write {:.0f} MiB/s (fsynced), read {:.0f} MiB/s\n",
                       d.measured->seq_write_mib_s, d.measured->seq_read_mib_s);
  } else if (!d.measure_error.empty()) {
    out += "  speed:       not measured: " + d.measure_error + "\n";
  }
  return out;
}

std::string HumanUrl(const job::UrlDiagnosis& d) {
  std::string out =
      fmt::format("{}\n  endpoint:    {} (region {}, {} addressing)\n  credentials: {}\n", d.url,
                  d.endpoint, d.region, d.addressing, d.credentials);
  if (d.listable)
    out +=
        fmt::format("  list:        ok, {:.1f} ms per request (median of 5)\n", d.list_latency_ms);
  if (d.writable) {
    out += "  write:       ok (probe written, read back, deleted)\n";
    if (d.write_mib_s > 0) {
      out += fmt::format("  throughput:  16 MiB probe: write {:.0f} MiB/s, read {:.0f} MiB/s\n",
                         d.write_mib_s, d.read_mib_s);
    }
  }
  for (const auto& e : d.errors) out += "  error:       " + e + "\n";
  return out;
}

Status RunDoctor(Context& ctx, const DoctorCliOptions& o) {
  bool failed = false;
  for (const auto& p : o.paths) {
    if (p.find("://") != std::string::npos && p.rfind("file://", 0) != 0) {
      FERRY_ASSIGN_OR_RETURN(auto d, job::DiagnoseUrl(p, *ctx.registry, !o.no_bench));
      FERRY_RETURN_IF_ERROR(o.json ? PrintJson(ctx, UrlDiagnosisJson(d)) : Print(ctx, HumanUrl(d)));
      failed |= !d.errors.empty();
      continue;
    }
    FERRY_ASSIGN_OR_RETURN(auto parsed, ParseUrlArg(ctx, p));
    FERRY_ASSIGN_OR_RETURN(auto d, job::DiagnosePath("/" + parsed.key, {.measure = !o.no_bench}));
    FERRY_RETURN_IF_ERROR(o.json ? PrintJson(ctx, PathDiagnosisJson(d)) : Print(ctx, Human(d)));
  }
  if (failed) return Status(StatusCode::kFailedPrecondition, "doctor found problems (see above)");
  return Status();
}

}  // namespace

void AddDoctorCommand(CLI::App& app, Action& action) {
  auto o = std::make_shared<DoctorCliOptions>();
  auto* cmd = app.add_subcommand("doctor", "Explain where a path's data lives and how fast it is");
  cmd->add_option("paths", o->paths, "Local paths or s3:// URLs")->required();
  cmd->add_flag("--json", o->json, "One JSON object per path");
  cmd->add_flag("--no-bench", o->no_bench, "Skip the small-file and throughput measurements");
  cmd->callback([o, &action] { action = [o](Context& ctx) { return RunDoctor(ctx, *o); }; });
}

}  // namespace ferry::cli

// ferry doctor PATH...: what kind of storage holds each path, whether data there outlives the
// container, the pod and the machine, free space, and small-file and sequential speed.

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "cli/command.h"
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

nlohmann::json Json(const job::PathDiagnosis& d) {
  nlohmann::json j = {{"path", d.path},
                      {"kind", d.verdict.kind},
                      {"persistence", std::string(job::PersistenceName(d.verdict.persistence))},
                      {"verdict", d.verdict.verdict},
                      {"notes", d.verdict.notes},
                      {"mount",
                       {{"source", d.mount.source},
                        {"mount_point", d.mount.mount_point},
                        {"fstype", d.mount.fstype},
                        {"options", d.mount.options},
                        {"super_options", d.mount.super_options}}},
                      {"free_bytes", d.free_bytes},
                      {"total_bytes", d.total_bytes}};
  if (d.measured) {
    j["small_file_ops_per_s"] = d.measured->small_file_ops_per_s;
    j["seq_write_mib_s"] = d.measured->seq_write_mib_s;
    j["seq_read_mib_s"] = d.measured->seq_read_mib_s;
  }
  if (!d.measure_error.empty()) j["measure_error"] = d.measure_error;
  return j;
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

nlohmann::json JsonUrl(const job::UrlDiagnosis& d) {
  return {{"url", d.url},
          {"endpoint", d.endpoint},
          {"region", d.region},
          {"addressing", d.addressing},
          {"credentials", d.credentials},
          {"listable", d.listable},
          {"list_latency_ms", d.list_latency_ms},
          {"writable", d.writable},
          {"write_mib_s", d.write_mib_s},
          {"read_mib_s", d.read_mib_s},
          {"errors", d.errors}};
}

Status RunDoctor(Context& ctx, const DoctorCliOptions& o) {
  bool failed = false;
  for (const auto& p : o.paths) {
    if (p.find("://") != std::string::npos && p.rfind("file://", 0) != 0) {
      FERRY_ASSIGN_OR_RETURN(auto d, job::DiagnoseUrl(p, *ctx.registry, !o.no_bench));
      std::string text =
          o.json ? JsonUrl(d).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"
                 : HumanUrl(d);
      FERRY_RETURN_IF_ERROR(Print(ctx, text));
      failed |= !d.errors.empty();
      continue;
    }
    FERRY_ASSIGN_OR_RETURN(auto parsed, ParseUrlArg(ctx, p));
    FERRY_ASSIGN_OR_RETURN(auto d, job::DiagnosePath("/" + parsed.key, {.measure = !o.no_bench}));
    std::string text =
        o.json ? Json(d).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"
               : Human(d);
    FERRY_RETURN_IF_ERROR(Print(ctx, text));
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

// ferry doctor PATH...: what kind of storage holds each path, whether data there outlives the
// container, the pod and the machine, free space, and small-file and sequential speed: reading
// the files already there (also on read-only paths and prefixes) and, where it may, writing.

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

std::string Seconds(double s) {
  return s < 10 ? fmt::format("{:.1f} s", s) : fmt::format("{:.0f} s", s);
}

// The read probe in words: what was read, how, and the rates (never a rate without its sample).
std::string HumanRead(const job::ReadProbe& r) {
  std::string out =
      fmt::format("  listed:      {} files, {}{}\n", r.listed_files, HumanBytes(r.listed_bytes),
                  r.listing_complete ? "" : " (stopped listing there: the tree has more)");
  if (r.listed_files == 0) return out + "  read:        nothing to read (no files here)\n";
  if (r.small_files_read) {
    out += fmt::format(
        "  read small:  {:.0f} files/s ({} files, {} in {:.2f} s, {} in flight like ferry cp)\n",
        r.small_files_per_s, r.small_files_read, HumanBytes(r.small_bytes_read), r.small_seconds,
        r.concurrency);
  }
  if (r.large_bytes_read) {
    out += fmt::format(
        "  read large:  {:.0f} MiB/s ({} of the {} largest files in {:.2f} s, {} parts in "
        "flight)\n",
        r.read_mib_s, HumanBytes(r.large_bytes_read), r.large_files_read, r.large_seconds,
        r.concurrency);
  }
  if (r.predicted_copy_seconds) {
    out += fmt::format(
        "  ferry cp:    ~{} to copy the {} files listed from here (reading side, at the parallel "
        "rates above)\n",
        Seconds(*r.predicted_copy_seconds), r.listed_files);
  }
  return out;
}

Json ReadJson(const job::ReadProbe& r) {
  Json j = {{"concurrency", r.concurrency},
            {"listed_files", r.listed_files},
            {"listed_bytes", r.listed_bytes},
            {"listed_small_files", r.listed_small_files},
            {"listed_large_bytes", r.listed_large_bytes},
            {"listing_complete", r.listing_complete},
            {"small_files_read", r.small_files_read},
            {"small_bytes_read", r.small_bytes_read},
            {"small_seconds", r.small_seconds},
            {"small_files_per_s", r.small_files_per_s},
            {"large_files_read", r.large_files_read},
            {"large_bytes_read", r.large_bytes_read},
            {"large_seconds", r.large_seconds},
            {"read_mib_s", r.read_mib_s}};
  if (r.predicted_copy_seconds) j["predicted_copy_seconds"] = *r.predicted_copy_seconds;
  return j;
}

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
    out += fmt::format(
        "  small files: {:.0f} create+stat+read+delete of 4 KiB per second (written, one at a "
        "time)\n",
        d.measured->small_file_ops_per_s);
    out += fmt::format("  sequential:  write {:.0f} MiB/s (fsynced), read {:.0f} MiB/s\n",
                       d.measured->seq_write_mib_s, d.measured->seq_read_mib_s);
  } else if (!d.measure_error.empty()) {
    out += "  write speed: not measured: " + d.measure_error + "\n";
  }
  if (d.read) out += HumanRead(*d.read);
  if (!d.read_error.empty()) out += "  read speed:  not measured: " + d.read_error + "\n";
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
  if (d.read) out += HumanRead(*d.read);
  for (const auto& e : d.errors) out += "  error:       " + e + "\n";
  return out;
}

Status RunDoctor(Context& ctx, const DoctorCliOptions& o) {
  bool failed = false;
  for (const auto& p : o.paths) {
    if (p.find("://") != std::string::npos && p.rfind("file://", 0) != 0) {
      FERRY_ASSIGN_OR_RETURN(auto d, job::DiagnoseUrl(p, *ctx.registry, !o.no_bench));
      Json j = UrlDiagnosisJson(d);
      if (d.read) j["read"] = ReadJson(*d.read);
      FERRY_RETURN_IF_ERROR(o.json ? PrintJson(ctx, j) : Print(ctx, HumanUrl(d)));
      failed |= !d.errors.empty();
      continue;
    }
    FERRY_ASSIGN_OR_RETURN(auto parsed, ParseUrlArg(ctx, p));
    // The same path as `ferry cp` opens it, for reading its files the way cp does.
    FERRY_ASSIGN_OR_RETURN(auto opened, OpenUrl(ctx, p));
    FERRY_ASSIGN_OR_RETURN(auto d, job::DiagnosePath("/" + parsed.key, {.measure = !o.no_bench,
                                                                        .store = opened.store.get(),
                                                                        .key = opened.key}));
    Json j = PathDiagnosisJson(d);
    if (!o.no_bench) j["writable"] = d.measured.has_value();  // the write test ran
    if (d.read) j["read"] = ReadJson(*d.read);
    if (!d.read_error.empty()) j["read_error"] = d.read_error;
    FERRY_RETURN_IF_ERROR(o.json ? PrintJson(ctx, j) : Print(ctx, Human(d)));
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
  cmd->add_flag("--no-bench", o->no_bench,
                "Skip the small-file and throughput measurements (reads and writes)");
  cmd->callback([o, &action] { action = [o](Context& ctx) { return RunDoctor(ctx, *o); }; });
}

}  // namespace ferry::cli

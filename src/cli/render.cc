#include "cli/render.h"

#include "base/redact.h"
#include "base/time_format.h"

namespace ferry::cli {

namespace {

std::string Time(const std::optional<SystemTime>& t, const char* unknown) {
  return t ? FormatIso8601(*t) : std::string(unknown);
}

}  // namespace

std::string JsonLine(const Json& j) {
  return Redact(j.dump(-1, ' ', false, Json::error_handler_t::replace)) + "\n";
}

Status PrintJson(Context& ctx, const Json& j) { return Print(ctx, JsonLine(j)); }

Json ListedObjectJson(const storage::Store& store, const storage::ObjectInfo& info) {
  return {{"key", info.key},
          {"url", store.UrlFor(info.key)},
          {"size", info.size},
          {"modified", Time(info.modified, "-")},
          {"etag", info.etag}};
}

Json ListedPrefixJson(const storage::Store& store, const std::string& prefix) {
  return {{"prefix", prefix}, {"url", store.UrlFor(prefix)}};
}

Json StatJson(const storage::Store& store, const storage::ObjectInfo& info) {
  return {{"url", store.UrlFor(info.key)},       {"key", info.key},   {"size", info.size},
          {"modified", Time(info.modified, "")}, {"etag", info.etag}, {"metadata", info.metadata}};
}

Json CopySummaryJson(const transfer::CopyReport& r, const Status& s) {
  Json j = {{"ok", s.ok()},
            {"files", r.files_total},
            {"copied", r.files_copied},
            {"skipped", r.files_skipped},
            {"failed", r.files_failed},
            {"bytes", r.bytes_total},
            {"bytes_copied", r.bytes_copied},
            {"bytes_skipped", r.bytes_skipped},
            {"bytes_resumed", r.bytes_resumed},
            {"seconds", r.seconds},
            {"retries", r.retries},
            {"verified", r.verified},
            {"unverified", r.unverified},
            {"server_side", r.server_side},
            {"peak_buffer_bytes", r.peak_buffer_bytes},
            {"errors", r.errors},
            {"left_out_count", r.left_out_count}};
  // A failed copy always names its cause, even when no single object failed.
  if (!s.ok() && r.errors.empty()) j["errors"].push_back(s.message());
  Json left = Json::array();
  for (const auto& e : r.left_out) {
    left.push_back(
        {{"key", e.key}, {"reason", storage::SkipKindName(e.kind)}, {"target", e.detail}});
  }
  j["left_out"] = std::move(left);
  return j;
}

Json PathDiagnosisJson(const job::PathDiagnosis& d) {
  Json j = {{"path", d.path},
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

Json UrlDiagnosisJson(const job::UrlDiagnosis& d) {
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

Json PackSummaryJson(const shard::PackReport& r) {
  return {{"index", r.index_url}, {"shards", r.index.shards.size()}, {"samples", r.index.samples()},
          {"files", r.files},     {"bytes", r.index.bytes()},        {"seconds", r.seconds}};
}

Json ShardEntryJson(const shard::ScannedEntry& e) {
  return {{"name", e.name}, {"size", e.size}, {"offset", e.offset}};
}

Json DatasetJson(const std::string& index_url, const shard::DatasetIndex& index) {
  Json shards = Json::array();
  for (const auto& s : index.shards) {
    shards.push_back(
        {{"name", s.name}, {"size", s.size}, {"samples", s.samples}, {"crc32c", s.crc32c}});
  }
  return {{"index", index_url},
          {"samples", index.samples()},
          {"bytes", index.bytes()},
          {"shards", std::move(shards)}};
}

Json VerifyReportJson(const shard::VerifyReport& r) {
  return {
      {"index", r.index_url},         {"ok", r.problems.empty()}, {"shards", r.index.shards.size()},
      {"samples", r.index.samples()}, {"bytes", r.index.bytes()}, {"problems", r.problems}};
}

Json AuthJson(const std::string& url, const storage::StoreDescription& d) {
  return {{"url", url},
          {"endpoint", d.endpoint},
          {"region", d.region},
          {"addressing", d.addressing},
          {"credentials", d.credentials ? Json{{"source", d.credentials->source},
                                               {"access_key", d.credentials->access_key},
                                               {"identity", d.credentials->identity},
                                               {"anonymous", d.credentials->anonymous},
                                               {"temporary", d.credentials->temporary},
                                               {"summary", d.credentials->summary}}
                                        : Json()}};
}

}  // namespace ferry::cli

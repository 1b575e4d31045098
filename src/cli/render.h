#pragma once
// The JSON of every `--json` output (ls, stat, cp, doctor, auth, run, shard pack/ls/verify), in one
// place: the field names of each value, and the one way they are written: one line, keys in the
// order given here, invalid UTF-8 replaced (U+FFFD) instead of throwing, every secret pattern
// removed by Redact() like any other output line. Text output stays with each command.

#include <nlohmann/json.hpp>

#include <string>

#include "base/status.h"
#include "cli/command.h"
#include "job/doctor.h"
#include "job/doctor_url.h"
#include "shard/dataset_ops.h"
#include "shard/index.h"
#include "shard/pack.h"
#include "shard/scan.h"
#include "storage/store.h"
#include "transfer/copy_options.h"

namespace ferry::cli {

using Json = nlohmann::ordered_json;

// `j` as one line of text ending in '\n'.
std::string JsonLine(const Json& j);
// Prints JsonLine(j) (see Print()).
Status PrintJson(Context& ctx, const Json& j);

// ferry ls: an object {key, url, size, modified ("-" when unknown), etag}; a prefix {prefix, url}.
Json ListedObjectJson(const storage::Store& store, const storage::ObjectInfo& info);
Json ListedPrefixJson(const storage::Store& store, const std::string& prefix);
// ferry stat: {url, key, size, modified ("" when unknown), etag, metadata}.
Json StatJson(const storage::Store& store, const storage::ObjectInfo& info);
// ferry cp: the summary; a failed copy always names its cause in `errors`.
Json CopySummaryJson(const transfer::CopyReport& r, const Status& s);
// ferry doctor: one object per path or URL.
Json PathDiagnosisJson(const job::PathDiagnosis& d);
Json UrlDiagnosisJson(const job::UrlDiagnosis& d);
// ferry shard pack / ls.
Json PackSummaryJson(const shard::PackReport& r);
Json ShardEntryJson(const shard::ScannedEntry& e);
Json DatasetJson(const std::string& index_url, const shard::DatasetIndex& index);
// ferry shard verify: {index, ok, shards, samples, bytes, problems: [one line per bad shard]}.
Json VerifyReportJson(const shard::VerifyReport& r);
// ferry auth: {url, endpoint, region, addressing, credentials: {source, access_key (masked),
// identity, anonymous, temporary, summary}} (never a secret);
// the command adds {check: "ok" | "skipped"}.
Json AuthJson(const std::string& url, const storage::StoreDescription& d);

}  // namespace ferry::cli

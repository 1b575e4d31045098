#include "tracker/mlflow/validation.h"

#include <cctype>
#include <string>

#include "tracker/retention_policy.h"

namespace ferry::tracker::mlflow {
namespace {

std::string Shown(std::string_view s) {
  return "'" + std::string(s.substr(0, 100)) + (s.size() > 100 ? "...'" : "'");
}

Status TooLong(std::string_view what, std::string_view key, size_t size, size_t limit) {
  return InvalidArgument(std::string(what) + " " + Shown(key) + " is " + std::to_string(size) +
                         " bytes long; the limit is " + std::to_string(limit));
}

}  // namespace

Status ValidateKey(std::string_view what, std::string_view key) {
  if (key.empty()) return InvalidArgument(std::string(what) + " name must not be empty");
  if (key.size() > kMaxKeyLength) {
    return TooLong(std::string(what) + " name", key, key.size(), kMaxKeyLength);
  }
  for (char c : key) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
              c == ' ' || c == ':' || c == '/';
    if (!ok) {
      return InvalidArgument("Invalid " + std::string(what) + " name: " + Shown(key) +
                             ". Names may only contain alphanumerics, underscores (_), dashes "
                             "(-), periods (.), spaces ( ), colons (:) and slashes (/)");
    }
  }
  std::string padded = "/" + std::string(key) + "/";
  if (key.front() == '/' || padded.find("/../") != std::string::npos) {
    return InvalidArgument("Invalid " + std::string(what) + " name: " + Shown(key) +
                           ". Names may not start with '/' or contain a '..' segment");
  }
  return Status();
}

Status ValidateBatch(const std::vector<MetricPoint>& metrics, const std::vector<Param>& params,
                     const std::vector<Tag>& tags) {
  if (metrics.size() > kMaxBatchMetrics) {
    return InvalidArgument("A batch logging request can contain at most " +
                           std::to_string(kMaxBatchMetrics) + " metrics; got " +
                           std::to_string(metrics.size()));
  }
  if (params.size() > kMaxBatchParams) {
    return InvalidArgument("A batch logging request can contain at most " +
                           std::to_string(kMaxBatchParams) + " params; got " +
                           std::to_string(params.size()));
  }
  if (tags.size() > kMaxBatchTags) {
    return InvalidArgument("A batch logging request can contain at most " +
                           std::to_string(kMaxBatchTags) + " tags; got " +
                           std::to_string(tags.size()));
  }
  size_t total = metrics.size() + params.size() + tags.size();
  if (total > kMaxBatchEntities) {
    return InvalidArgument("A batch logging request can contain at most " +
                           std::to_string(kMaxBatchEntities) +
                           " metrics, params and tags in total; got " + std::to_string(total));
  }
  for (const auto& m : metrics) {
    FERRY_RETURN_IF_ERROR(ValidateKey("metric", m.key));
    if (m.timestamp_ms < 0 || m.timestamp_ms > kMaxTimestampMs) {  // the message only when needed
      return ValidateTimestamp("timestamp of metric '" + m.key + "'", m.timestamp_ms);
    }
  }
  for (const auto& p : params) {
    FERRY_RETURN_IF_ERROR(ValidateKey("param", p.key));
    if (p.value.size() > kMaxParamValueLength) {
      return TooLong("value of param", p.key, p.value.size(), kMaxParamValueLength);
    }
  }
  for (const auto& t : tags) {
    FERRY_RETURN_IF_ERROR(ValidateKey("tag", t.key));
    if (t.value.size() > kMaxTagValueLength) {
      return TooLong("value of tag", t.key, t.value.size(), kMaxTagValueLength);
    }
  }
  return Status();
}

Status ValidateExperimentName(std::string_view name) {
  if (name.empty()) return InvalidArgument("Invalid experiment name: '' (must not be empty)");
  if (name.size() > kMaxExperimentNameLength) {
    return TooLong("experiment name", name, name.size(), kMaxExperimentNameLength);
  }
  return Status();
}

Status ValidateRunText(std::string_view what, std::string_view text) {
  if (text.size() > kMaxRunNameLength) {
    return InvalidArgument(std::string(what) + " of " + std::to_string(text.size()) +
                           " bytes exceeds the limit of " + std::to_string(kMaxRunNameLength));
  }
  return Status();
}

Status ValidateTimestamp(std::string_view what, int64_t ms) {
  if (ms < 0 || ms > kMaxTimestampMs) {
    return InvalidArgument("Invalid value " + std::to_string(ms) + " for parameter '" +
                           std::string(what) + "': a time in milliseconds since 1970, from 0 to " +
                           std::to_string(kMaxTimestampMs) + " (year 9999)");
  }
  return Status();
}

Status ValidateExperimentTag(const Tag& tag) {
  FERRY_RETURN_IF_ERROR(ValidateKey("tag", tag.key));
  if (tag.value.size() > kMaxExperimentTagValueLength) {
    return TooLong("value of experiment tag", tag.key, tag.value.size(),
                   kMaxExperimentTagValueLength);
  }
  return ValidateRetentionTag(tag);  // ferry.retention.* settings
}

}  // namespace ferry::tracker::mlflow

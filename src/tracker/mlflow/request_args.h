#pragma once
// The arguments of one MLflow request, from the JSON body (POST) or the query string (GET), read
// by field name with MLflow's types (docs/semantics/mlflow.md, "Requests"). Every error is
// kInvalidArgument naming the field ("INVALID_PARAMETER_VALUE" on the wire); a body that is not
// a JSON object is kInvalidArgument with BAD_REQUEST (see MalformedBody()). Unknown fields are
// ignored. Not thread-safe; one per request.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "server/http_types.h"
#include "tracker/wire/mlflow_wire.h"

namespace ferry::tracker::mlflow {

class RequestArgs final {
 public:
  // GET and HEAD read the query string; every other method reads the body as a JSON object (an
  // empty body is an empty object).
  static Result<RequestArgs> From(const server::Request& request);

  // A string field; a JSON number is accepted and printed (ids sent as numbers). nullopt when
  // absent or JSON null.
  Result<std::optional<std::string>> String(std::string_view name) const;
  // As String(), but absent is "Missing value for required parameter 'NAME'".
  Result<std::string> RequiredString(std::string_view name) const;
  // An int64: a JSON integer or a string of decimal digits (with an optional '-').
  Result<std::optional<int64_t>> Int64(std::string_view name) const;
  // A double: a JSON number or one of "NaN", "Infinity", "-Infinity" (or any number as text).
  Result<std::optional<double>> Double(std::string_view name) const;
  // A repeated string: a JSON array of strings (a lone string counts as one), or every query
  // parameter called NAME.
  Result<std::vector<std::string>> StringList(std::string_view name) const;
  // A JSON array of objects (log-batch's metrics, params, tags); empty when absent. GET
  // requests have none. The elements are references into this RequestArgs (no copies: a
  // log-batch of 1,000 metrics used to copy 1,000 objects).
  Result<std::vector<std::reference_wrapper<const nlohmann::json>>> ObjectList(
      std::string_view name) const;
  // run_id, or its alias run_uuid (old clients, the npm client).
  Result<std::string> RunId() const;

  // The body as parsed (an object); null for GET.
  const nlohmann::json& body() const { return body_; }

 private:
  const nlohmann::json* Find(std::string_view name) const;
  std::optional<std::string_view> QueryValue(std::string_view name) const;

  bool from_query_ = false;
  nlohmann::json body_;
  std::vector<std::pair<std::string, std::string>> query_;
};

// Reads a field of an element of an ObjectList (same rules as RequestArgs). `where` names the
// element in messages ("metrics[3]").
Result<std::optional<std::string>> ObjectString(const nlohmann::json& object, std::string_view name,
                                                std::string_view where);
Result<std::optional<int64_t>> ObjectInt64(const nlohmann::json& object, std::string_view name,
                                           std::string_view where);
Result<std::optional<double>> ObjectDouble(const nlohmann::json& object, std::string_view name,
                                           std::string_view where);

// True when `text` opens more than `max_depth` arrays/objects inside each other (brackets in
// strings, escaped quotes included, do not count). Runs before parsing, so a deeply nested body
// costs one pass over its bytes and no allocation.
bool JsonDepthExceeds(std::string_view text, int max_depth);

// RequestArgs::From starts the message of an unparseable body with wire::kMalformedBody
// (answered BAD_REQUEST instead of INVALID_PARAMETER_VALUE).
using wire::kMalformedBody;
// The longest string argument (a filter, a name, a location) any request may carry; fields
// with a limit of their own (names, tag and param values: validation.h) are held to that.
inline constexpr size_t kMaxArgumentLength = 64 * 1024;

}  // namespace ferry::tracker::mlflow

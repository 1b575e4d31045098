#include "tracker/mlflow/request_args.h"

#include <charconv>
#include <cmath>
#include <limits>

namespace ferry::tracker::mlflow {
namespace {

using nlohmann::json;

// MLflow's messages nest 3 levels (log-batch: body, metrics list, metric); 32 leaves room for
// any client's extras.
constexpr int kMaxJsonDepth = 32;

std::string Shown(const json& v) {
  std::string s = v.dump();
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return s;
}

Status BadValue(std::string_view name, std::string_view where, const std::string& shown,
                std::string_view expected) {
  std::string field(name);
  if (!where.empty()) field = std::string(where) + "." + field;
  return InvalidArgument("Invalid value " + shown + " for parameter '" + field +
                         "' supplied: expected " + std::string(expected));
}

std::optional<int64_t> ParseInt64Text(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::optional<double> ParseDoubleText(std::string_view s) {
  if (s == "NaN" || s == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (s == "Infinity" || s == "inf") return std::numeric_limits<double>::infinity();
  if (s == "-Infinity" || s == "-inf") return -std::numeric_limits<double>::infinity();
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

Result<std::optional<std::string>> StringOf(const json* v, std::string_view name,
                                            std::string_view where) {
  if (!v || v->is_null()) return std::optional<std::string>();
  if (v->is_string()) return std::optional<std::string>(v->get<std::string>());
  if (v->is_number_integer() || v->is_number_unsigned()) {
    return std::optional<std::string>(v->dump());
  }
  return BadValue(name, where, Shown(*v), "a string");
}

Result<std::optional<int64_t>> Int64Of(const json* v, std::string_view name,
                                       std::string_view where) {
  if (!v || v->is_null()) return std::optional<int64_t>();
  if (v->is_number_integer()) return std::optional<int64_t>(v->get<int64_t>());
  if (v->is_number_unsigned() &&
      v->get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return std::optional<int64_t>(static_cast<int64_t>(v->get<uint64_t>()));
  }
  if (v->is_number_float()) {
    double d = v->get<double>();
    if (std::trunc(d) == d && std::fabs(d) < 9.2e18) {
      return std::optional<int64_t>(static_cast<int64_t>(d));
    }
  }
  if (v->is_string()) {
    if (auto i = ParseInt64Text(v->get<std::string>())) return std::optional<int64_t>(*i);
  }
  return BadValue(name, where, Shown(*v), "an integer");
}

Result<std::optional<double>> DoubleOf(const json* v, std::string_view name,
                                       std::string_view where) {
  if (!v || v->is_null()) return std::optional<double>();
  if (v->is_number()) return std::optional<double>(v->get<double>());
  if (v->is_string()) {
    if (auto d = ParseDoubleText(v->get<std::string>())) return std::optional<double>(*d);
  }
  return BadValue(name, where, Shown(*v), "a number");
}

const json* FindIn(const json& object, std::string_view name) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(name);
  return it == object.end() ? nullptr : &*it;
}

}  // namespace

bool JsonDepthExceeds(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character, whatever it is
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

Result<RequestArgs> RequestArgs::From(const server::Request& request) {
  RequestArgs args;
  if (request.method == "GET" || request.method == "HEAD") {
    args.from_query_ = true;
    args.query_ = request.query;
    return args;
  }
  std::string_view body = request.body;
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    args.body_ = json::object();
    return args;
  }
  // The parser keeps its own stack, but printing and walking a parsed value recurse: bodies
  // nested deeper than any MLflow message are refused before parsing. (A depth callback in the
  // parser itself made log-batch parsing 1.8x slower: json_sax_dom_callback_parser.)
  if (JsonDepthExceeds(body, kMaxJsonDepth)) {
    return InvalidArgument(std::string(kMalformedBody) + ": nested deeper than " +
                           std::to_string(kMaxJsonDepth) + " levels");
  }
  try {
    args.body_ = json::parse(body);
  } catch (const json::parse_error& e) {
    return InvalidArgument(std::string(kMalformedBody) + ": syntax error at byte " +
                           std::to_string(e.byte));
  } catch (const json::exception&) {
    // out_of_range: a number past what a double holds (1e999). The library's text names its
    // own internals; say what was wrong.
    return InvalidArgument(std::string(kMalformedBody) + ": a number is out of range");
  }
  if (!args.body_.is_object()) {
    return InvalidArgument(std::string(kMalformedBody) + ": expected a JSON object, got " +
                           args.body_.type_name());
  }
  return args;
}

const json* RequestArgs::Find(std::string_view name) const { return FindIn(body_, name); }

std::optional<std::string_view> RequestArgs::QueryValue(std::string_view name) const {
  for (const auto& [k, v] : query_) {
    if (k == name) return std::string_view(v);
  }
  return std::nullopt;
}

Result<std::optional<std::string>> RequestArgs::String(std::string_view name) const {
  std::optional<std::string> value;
  if (from_query_) {
    if (auto v = QueryValue(name)) value = std::string(*v);
  } else {
    FERRY_ASSIGN_OR_RETURN(value, StringOf(Find(name), name, ""));
  }
  if (value && value->size() > kMaxArgumentLength) {
    return InvalidArgument("Parameter '" + std::string(name) + "' is " +
                           std::to_string(value->size()) + " bytes long; at most " +
                           std::to_string(kMaxArgumentLength) + " are accepted");
  }
  return value;
}

Result<std::string> RequestArgs::RequiredString(std::string_view name) const {
  FERRY_ASSIGN_OR_RETURN(auto v, String(name));
  if (!v || v->empty()) {
    return InvalidArgument("Missing value for required parameter '" + std::string(name) + "'");
  }
  return *v;
}

Result<std::optional<int64_t>> RequestArgs::Int64(std::string_view name) const {
  if (from_query_) {
    auto v = QueryValue(name);
    if (!v) return std::optional<int64_t>();
    if (auto i = ParseInt64Text(*v)) return std::optional<int64_t>(*i);
    return BadValue(name, "", "'" + std::string(v->substr(0, 80)) + "'", "an integer");
  }
  return Int64Of(Find(name), name, "");
}

Result<std::optional<double>> RequestArgs::Double(std::string_view name) const {
  if (from_query_) {
    auto v = QueryValue(name);
    if (!v) return std::optional<double>();
    if (auto d = ParseDoubleText(*v)) return std::optional<double>(*d);
    return BadValue(name, "", "'" + std::string(v->substr(0, 80)) + "'", "a number");
  }
  return DoubleOf(Find(name), name, "");
}

Result<std::vector<std::string>> RequestArgs::StringList(std::string_view name) const {
  std::vector<std::string> out;
  if (from_query_) {
    std::string bracketed = std::string(name) + "[]";
    for (const auto& [k, v] : query_) {
      if (k == name || k == bracketed) out.push_back(v);
    }
    return out;
  }
  const json* v = Find(name);
  if (!v || v->is_null()) return out;
  if (v->is_string()) {
    out.push_back(v->get<std::string>());
    return out;
  }
  if (!v->is_array()) return BadValue(name, "", Shown(*v), "a list of strings");
  for (const auto& e : *v) {
    FERRY_ASSIGN_OR_RETURN(auto s, StringOf(&e, name, ""));
    if (!s) return BadValue(name, "", Shown(*v), "a list of strings");
    out.push_back(std::move(*s));
  }
  return out;
}

Result<std::vector<std::reference_wrapper<const nlohmann::json>>> RequestArgs::ObjectList(
    std::string_view name) const {
  std::vector<std::reference_wrapper<const nlohmann::json>> out;
  const json* v = from_query_ ? nullptr : Find(name);
  if (!v || v->is_null()) return out;
  if (!v->is_array()) return BadValue(name, "", Shown(*v), "a list of objects");
  out.reserve(v->size());
  for (size_t i = 0; i < v->size(); ++i) {
    if (!(*v)[i].is_object()) {
      return BadValue(std::string(name) + "[" + std::to_string(i) + "]", "", Shown((*v)[i]),
                      "an object");
    }
    out.push_back((*v)[i]);
  }
  return out;
}

Result<std::string> RequestArgs::RunId() const {
  FERRY_ASSIGN_OR_RETURN(auto id, String("run_id"));
  if (!id || id->empty()) {
    FERRY_ASSIGN_OR_RETURN(id, String("run_uuid"));
  }
  if (!id || id->empty()) {
    return InvalidArgument("Missing value for required parameter 'run_id'");
  }
  return *id;
}

Result<std::optional<std::string>> ObjectString(const nlohmann::json& object, std::string_view name,
                                                std::string_view where) {
  return StringOf(FindIn(object, name), name, where);
}

Result<std::optional<int64_t>> ObjectInt64(const nlohmann::json& object, std::string_view name,
                                           std::string_view where) {
  return Int64Of(FindIn(object, name), name, where);
}

Result<std::optional<double>> ObjectDouble(const nlohmann::json& object, std::string_view name,
                                           std::string_view where) {
  return DoubleOf(FindIn(object, name), name, where);
}

}  // namespace ferry::tracker::mlflow

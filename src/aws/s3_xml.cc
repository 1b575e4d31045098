#include "aws/s3_xml.h"

#include <pugixml.hpp>

#include <sstream>

#include "base/strings.h"

namespace ferry::aws {

namespace {

Result<pugi::xml_document*> Load(pugi::xml_document& doc, std::string_view xml,
                                 std::string_view what) {
  if (!doc.load_buffer(xml.data(), xml.size())) {
    return Internal("malformed XML in " + std::string(what) + " answer");
  }
  return &doc;
}

// Parses `xml` into `doc` and returns its root element `root`; names `what` when either fails.
Result<pugi::xml_node> LoadRoot(pugi::xml_document& doc, std::string_view xml,
                                std::string_view what, const char* root) {
  FERRY_RETURN_IF_ERROR(Load(doc, xml, what).status());
  auto node = doc.child(root);
  if (!node) return Internal(std::string(what) + " answer has no " + root);
  return node;
}

std::string Unquote(std::string s) {
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') return s.substr(1, s.size() - 2);
  return s;
}

Status ErrorInBody(const pugi::xml_document& doc, std::string_view op) {
  auto err = doc.child("Error");
  if (!err) return Status();
  std::string code = err.child_value("Code");
  StatusCode sc = (code == "InternalError" || code == "SlowDown" || code == "ServiceUnavailable")
                      ? StatusCode::kUnavailable
                      : StatusCode::kInternal;
  return Status(
      sc, std::string(op) + " failed: " + code + ": " + err.child_value("Message"),
      ErrorDetail{
          .http_status = 200, .remote_code = code, .request_id = err.child_value("RequestId")});
}

}  // namespace

std::optional<S3Error> ParseS3Error(std::string_view xml) {
  pugi::xml_document doc;
  if (!doc.load_buffer(xml.data(), xml.size())) return std::nullopt;
  auto err = doc.child("Error");
  if (!err) return std::nullopt;
  return S3Error{.code = err.child_value("Code"),
                 .message = err.child_value("Message"),
                 .request_id = err.child_value("RequestId"),
                 .region = err.child_value("Region"),
                 .endpoint = err.child_value("Endpoint")};
}

namespace {

// A key of a listing answer; `url_encoded` when the answer says EncodingType=url.
Result<std::string> DecodeListedKey(const char* s, bool url_encoded, std::string_view op) {
  if (!url_encoded) return std::string(s);
  // S3 encodes with form-style '+' for space in some implementations; keys never contain a
  // literal '+' in url-encoded answers (it is sent as %2B).
  std::string t(s);
  for (char& c : t) {
    if (c == '+') c = ' ';
  }
  auto d = PercentDecode(t);
  if (!d) return Internal(std::string(op) + " answer has a malformed url-encoded key");
  return *d;
}

}  // namespace

Result<ListObjectsV2Page> ParseListObjectsV2(std::string_view xml) {
  pugi::xml_document doc;
  FERRY_ASSIGN_OR_RETURN(auto root, LoadRoot(doc, xml, "ListObjectsV2", "ListBucketResult"));
  bool url_encoded = std::string_view(root.child_value("EncodingType")) == "url";
  auto decode = [&](const char* s) { return DecodeListedKey(s, url_encoded, "ListObjectsV2"); };
  ListObjectsV2Page page;
  page.is_truncated = std::string_view(root.child_value("IsTruncated")) == "true";
  page.next_continuation_token = root.child_value("NextContinuationToken");
  for (auto c : root.children("Contents")) {
    ListedObject o;
    FERRY_ASSIGN_OR_RETURN(o.key, decode(c.child_value("Key")));
    o.size = ParseUint64(c.child_value("Size")).value_or(0);
    o.etag = Unquote(c.child_value("ETag"));
    if (auto t = ParseIso8601(c.child_value("LastModified"))) o.last_modified = *t;
    page.objects.push_back(std::move(o));
  }
  for (auto p : root.children("CommonPrefixes")) {
    FERRY_ASSIGN_OR_RETURN(std::string prefix, decode(p.child_value("Prefix")));
    page.common_prefixes.push_back(std::move(prefix));
  }
  return page;
}

Result<std::string> ParseInitiateMultipartUpload(std::string_view xml) {
  pugi::xml_document doc;
  FERRY_RETURN_IF_ERROR(Load(doc, xml, "CreateMultipartUpload").status());
  std::string id = doc.child("InitiateMultipartUploadResult").child_value("UploadId");
  if (id.empty()) return Internal("CreateMultipartUpload answer has no UploadId");
  return id;
}

std::string BuildCompleteMultipartUpload(const std::vector<CompletedPart>& parts) {
  pugi::xml_document doc;
  auto root = doc.append_child("CompleteMultipartUpload");
  for (const auto& p : parts) {
    auto part = root.append_child("Part");
    part.append_child("PartNumber").text().set(p.number);
    part.append_child("ETag").text().set(("\"" + p.etag + "\"").c_str());
  }
  std::ostringstream out;
  doc.save(out, "", pugi::format_raw | pugi::format_no_declaration);
  return out.str();
}

Result<std::string> ParseCompleteMultipartUpload(std::string_view xml) {
  pugi::xml_document doc;
  FERRY_RETURN_IF_ERROR(Load(doc, xml, "CompleteMultipartUpload").status());
  FERRY_RETURN_IF_ERROR(ErrorInBody(doc, "CompleteMultipartUpload"));
  return Unquote(doc.child("CompleteMultipartUploadResult").child_value("ETag"));
}

Result<ListPartsPage> ParseListParts(std::string_view xml) {
  pugi::xml_document doc;
  FERRY_ASSIGN_OR_RETURN(auto root, LoadRoot(doc, xml, "ListParts", "ListPartsResult"));
  ListPartsPage page;
  page.is_truncated = std::string_view(root.child_value("IsTruncated")) == "true";
  page.next_marker =
      static_cast<int>(ParseUint64(root.child_value("NextPartNumberMarker")).value_or(0));
  for (auto p : root.children("Part")) {
    page.parts.push_back(
        {.number = static_cast<int>(ParseUint64(p.child_value("PartNumber")).value_or(0)),
         .etag = Unquote(p.child_value("ETag")),
         .size = ParseUint64(p.child_value("Size")).value_or(0)});
  }
  return page;
}

Result<ListMultipartUploadsPage> ParseListMultipartUploads(std::string_view xml) {
  pugi::xml_document doc;
  FERRY_ASSIGN_OR_RETURN(auto root,
                         LoadRoot(doc, xml, "ListMultipartUploads", "ListMultipartUploadsResult"));
  bool url_encoded = std::string_view(root.child_value("EncodingType")) == "url";
  ListMultipartUploadsPage page;
  page.is_truncated = std::string_view(root.child_value("IsTruncated")) == "true";
  FERRY_ASSIGN_OR_RETURN(
      page.next_key_marker,
      DecodeListedKey(root.child_value("NextKeyMarker"), url_encoded, "ListMultipartUploads"));
  page.next_upload_id_marker = root.child_value("NextUploadIdMarker");
  for (auto u : root.children("Upload")) {
    UnfinishedUpload up;
    FERRY_ASSIGN_OR_RETURN(
        up.key, DecodeListedKey(u.child_value("Key"), url_encoded, "ListMultipartUploads"));
    up.upload_id = u.child_value("UploadId");
    if (auto t = ParseIso8601(u.child_value("Initiated"))) up.initiated = *t;
    page.uploads.push_back(std::move(up));
  }
  return page;
}

std::string BuildDeleteObjects(const std::vector<std::string>& keys, bool quiet) {
  pugi::xml_document doc;
  auto root = doc.append_child("Delete");
  if (quiet) root.append_child("Quiet").text().set("true");
  for (const auto& k : keys) {
    root.append_child("Object").append_child("Key").text().set(k.c_str());
  }
  std::ostringstream out;
  doc.save(out, "", pugi::format_raw | pugi::format_no_declaration);
  return out.str();
}

Result<std::vector<DeleteFailure>> ParseDeleteObjectsResult(std::string_view xml) {
  pugi::xml_document doc;
  FERRY_RETURN_IF_ERROR(Load(doc, xml, "DeleteObjects").status());
  std::vector<DeleteFailure> out;
  for (auto e : doc.child("DeleteResult").children("Error")) {
    out.push_back({e.child_value("Key"), e.child_value("Code"), e.child_value("Message")});
  }
  return out;
}

Result<std::string> ParseCopyObjectResult(std::string_view xml) {
  pugi::xml_document doc;
  FERRY_RETURN_IF_ERROR(Load(doc, xml, "CopyObject").status());
  FERRY_RETURN_IF_ERROR(ErrorInBody(doc, "CopyObject"));
  return Unquote(doc.child("CopyObjectResult").child_value("ETag"));
}

}  // namespace ferry::aws

#include "aws/sigv4.h"

#include <algorithm>

#include "base/hash.h"
#include "base/strings.h"

namespace ferry::aws {

namespace {

// Lower-cases names, trims values and collapses inner runs of spaces, merges repeated names.
std::vector<std::pair<std::string, std::string>> CanonicalHeaders(
    const std::vector<std::pair<std::string, std::string>>& headers) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, value] : headers) {
    std::string v;
    bool space = false;
    for (char c : Trim(value)) {
      if (c == ' ' || c == '\t') {
        space = true;
        continue;
      }
      if (space && !v.empty()) v.push_back(' ');
      space = false;
      v.push_back(c);
    }
    std::string n = ToLower(name);
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == n; });
    if (it != out.end()) {
      it->second += "," + v;
    } else {
      out.emplace_back(std::move(n), std::move(v));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

Sha256Digest DeriveSigningKey(const Credentials& creds, std::string_view date,
                              std::string_view region, std::string_view service) {
  std::string k = "AWS4" + creds.secret_access_key;
  auto k_date = HmacSha256(AsBytes(k), date);
  auto k_region = HmacSha256(k_date, region);
  auto k_service = HmacSha256(k_region, service);
  return HmacSha256(k_service, "aws4_request");
}

// The key changes once a day per secret, region and service, so each thread keeps the last one
// it derived (as the AWS SDKs do): four of a request's five HMACs saved.
Sha256Digest SigningKey(const Credentials& creds, std::string_view date, std::string_view region,
                        std::string_view service) {
  struct Cached {
    std::string secret, date, region, service;
    Sha256Digest key{};
  };
  thread_local Cached last;
  if (last.secret != creds.secret_access_key || last.date != date || last.region != region ||
      last.service != service) {
    last = {creds.secret_access_key, std::string(date), std::string(region), std::string(service),
            DeriveSigningKey(creds, date, region, service)};
  }
  return last.key;
}

}  // namespace

std::string CanonicalQueryString(const std::vector<std::pair<std::string, std::string>>& query) {
  std::vector<std::pair<std::string, std::string>> enc;
  enc.reserve(query.size());
  for (const auto& [k, v] : query) enc.emplace_back(PercentEncode(k), PercentEncode(v));
  std::sort(enc.begin(), enc.end());
  std::string out;
  for (const auto& [k, v] : enc) {
    if (!out.empty()) out.push_back('&');
    out += k + "=" + v;
  }
  return out;
}

SigningResult SignV4(const SigningInput& input, const Credentials& creds, std::string_view region,
                     std::string_view service, SystemTime now) {
  SigningResult r;
  std::string amz_date = FormatAmzDate(now);
  std::string date = amz_date.substr(0, 8);
  auto headers = CanonicalHeaders(input.headers);
  std::string canonical_headers;
  for (const auto& [n, v] : headers) {
    canonical_headers += n + ":" + v + "\n";
    if (!r.signed_headers.empty()) r.signed_headers.push_back(';');
    r.signed_headers += n;
  }
  r.canonical_request = input.method + "\n" + input.encoded_path + "\n" +
                        CanonicalQueryString(input.query) + "\n" + canonical_headers + "\n" +
                        r.signed_headers + "\n" + input.payload_hash;
  std::string scope =
      date + "/" + std::string(region) + "/" + std::string(service) + "/aws4_request";
  r.string_to_sign =
      "AWS4-HMAC-SHA256\n" + amz_date + "\n" + scope + "\n" + Sha256Hex(r.canonical_request);
  r.signing_key = SigningKey(creds, date, region, service);
  r.signature = HexEncode(HmacSha256(r.signing_key, r.string_to_sign));
  r.amz_date = amz_date;
  r.scope = scope;
  r.authorization = "AWS4-HMAC-SHA256 Credential=" + creds.access_key_id + "/" + scope +
                    ",SignedHeaders=" + r.signed_headers + ",Signature=" + r.signature;
  return r;
}

std::string ChunkSignature(const SigningResult& request, std::string_view previous,
                           const Sha256Digest& chunk_sha256) {
  std::string to_sign = "AWS4-HMAC-SHA256-PAYLOAD\n" + request.amz_date + "\n" + request.scope +
                        "\n" + std::string(previous) + "\n" + std::string(kEmptyPayloadSha256) +
                        "\n" + HexEncode(chunk_sha256);
  return HexEncode(HmacSha256(request.signing_key, to_sign));
}

std::vector<std::pair<std::string, std::string>> PresignV4(const SigningInput& input,
                                                           const Credentials& creds,
                                                           std::string_view region,
                                                           std::string_view service, SystemTime now,
                                                           int expires_seconds) {
  std::string amz_date = FormatAmzDate(now);
  std::string scope = amz_date.substr(0, 8) + "/" + std::string(region) + "/" +
                      std::string(service) + "/aws4_request";
  std::vector<std::pair<std::string, std::string>> params = {
      {"X-Amz-Algorithm", "AWS4-HMAC-SHA256"},
      {"X-Amz-Credential", creds.access_key_id + "/" + scope},
      {"X-Amz-Date", amz_date},
      {"X-Amz-Expires", std::to_string(expires_seconds)},
  };
  if (!creds.session_token.empty())
    params.emplace_back("X-Amz-Security-Token", creds.session_token);
  params.emplace_back("X-Amz-SignedHeaders", "host");
  SigningInput in = input;
  in.query.insert(in.query.end(), params.begin(), params.end());
  in.payload_hash = std::string(kUnsignedPayload);
  SigningResult r = SignV4(in, creds, region, service, now);
  params.emplace_back("X-Amz-Signature", r.signature);
  return params;
}

}  // namespace ferry::aws

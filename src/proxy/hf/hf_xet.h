#pragma once
// Keeping every Hub client on the HTTP path through the cache (docs/semantics/hf.md, "Xet").
// Nearly every Hub repository is stored on Xet, and a client that sees a Xet field takes a road
// that bypasses /hf: huggingface_hub 1.x with hf_xet takes a tree entry's `xetHash` (cached in
// its trees/<commit>.json) or a resolve answer's X-Xet-Hash to ask
// /api/{kind}/{repo}/xet-read-token/{rev} for a token to the Xet CAS, and never sends the HTTP
// resolve; @huggingface/hub does the same on a resolve answered as
// application/vnd.xet-fileinfo+json. So what /hf passes on holds no Xet field, header or link,
// and the token endpoints answer 403 with the way out (XetTokenRefusal).

#include <string>
#include <string_view>

#include "server/http_types.h"

namespace ferry::proxy::hf {

// `body` (a Hub API answer) without any object member whose name starts with "xet" (any case:
// xetHash, xetEnabled, ...), at any depth. Text that holds no "xet" or is not JSON is returned
// unchanged; otherwise the JSON is written back compactly.
std::string WithoutXetFields(std::string_view body);

// Whether an API tail ("xet-read-token/main", "xet-write-token/None") asks for a Xet token.
bool IsXetTokenTail(std::string_view tail);

// The answer to a Xet token request: 403 XetNotServed, naming the cause (a tree listing cached
// from huggingface.co itself, or another client's Xet path) and the fix.
server::Response XetTokenRefusal(std::string_view repo_key);

}  // namespace ferry::proxy::hf

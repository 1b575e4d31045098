#pragma once
// A small, tolerant HTML tag scanner for the simple API's pages: it finds start tags with their
// attributes (names lowercased, values entity-decoded, quoted either way or unquoted, any
// order; the first of duplicate attributes wins, as in HTML5), the text up to the next tag, and
// skips comments, doctypes, end tags and the raw text of <script>, <style>, <textarea> and
// <title> (so a link inside a script string is not a link). It does not build a tree: PEP 503
// pages are flat lists of <a> elements, and pip's own parser (html.parser) reads them the same
// way. Linear in the input; malformed input never fails, an unterminated tag is dropped.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ferry::proxy::pypi {

// One start tag. The views point into the scanned text or into the tag's own storage (values
// that needed decoding) and are valid only during the callback.
struct HtmlTag {
  struct Attribute {
    std::string_view name;  // as written; compare with Find (ASCII case-insensitive)
    std::string_view value;
  };
  std::string name;  // lowercase
  std::vector<Attribute> attributes;
  std::string_view text;  // decoded text after the tag up to the next '<'

  // The value of `attribute` (lowercase), or nullopt when absent.
  std::optional<std::string_view> Find(std::string_view attribute) const;

  std::vector<std::string> decoded;  // storage for decoded values; reserved, never reallocated
};

// Calls `on_tag` for each start tag in `html`, in order. Allocates only for values with
// character references (the scan of a 10 MB page must stay cheap).
void ScanHtmlTags(std::string_view html, const std::function<void(const HtmlTag&)>& on_tag);

// Decodes character references (&amp; &lt; &#62; &#x3E; and the common named ones). Unknown
// named references stay as written; numeric ones outside Unicode become U+FFFD.
std::string DecodeHtmlEntities(std::string_view s);

// Escapes & < > " ' so the result is safe as text and as a quoted attribute value.
void AppendHtmlEscaped(std::string& out, std::string_view s);
std::string HtmlEscape(std::string_view s);

}  // namespace ferry::proxy::pypi

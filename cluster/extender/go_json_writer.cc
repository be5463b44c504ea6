#include "cluster/extender/go_json_writer.h"

#include <fmt/format.h>

namespace qrm::extender {
namespace {

bool IsContinuation(unsigned char c) {
  return (c & 0xc0) == 0x80;
}

// The length of the valid UTF-8 sequence at s[i], or 0 when s[i] does not start one. The
// rules of Go's utf8.DecodeRuneInString: no overlong forms, no surrogates, nothing past U+10FFFF.
size_t Utf8Length(std::string_view s, size_t i) {
  const auto at = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = at(0);
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // the allowed range of the second byte
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (i + n > s.size() || at(1) < lo || at(1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (!IsContinuation(at(k))) return 0;
  }
  return n;
}

// The escape of an ASCII byte, or "" when it is written as it is.
std::string Escape(unsigned char c) {
  switch (c) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\b': return "\\b";
    case '\f': return "\\f";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    case '<':
    case '>':
    case '&': return fmt::format("\\u{:04x}", c);  // Go's HTML-safe default
    default: return c < 0x20 ? fmt::format("\\u{:04x}", c) : std::string();
  }
}

}  // namespace

std::string GoJsonQuote(std::string_view s) {
  std::string out = "\"";
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      const std::string escaped = Escape(c);
      out += escaped.empty() ? std::string(1, static_cast<char>(c)) : escaped;
      ++i;
      continue;
    }
    const size_t n = Utf8Length(s, i);
    if (n == 0) {
      out += "\\ufffd";
      ++i;
    } else if (n == 3 && c == 0xe2 && s[i + 1] == '\x80' &&
               (s[i + 2] == '\xa8' || s[i + 2] == '\xa9')) {
      out += s[i + 2] == '\xa8' ? "\\u2028" : "\\u2029";  // line and paragraph separators
      i += n;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out + "\"";
}

void GoJsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!has_items_.empty()) {
    if (has_items_.back()) out_ += ',';
    has_items_.back() = true;
  }
}

void GoJsonWriter::BeginObject() {
  BeforeValue();
  out_ += '{';
  has_items_.push_back(false);
}

void GoJsonWriter::EndObject() {
  out_ += '}';
  has_items_.pop_back();
}

void GoJsonWriter::BeginArray() {
  BeforeValue();
  out_ += '[';
  has_items_.push_back(false);
}

void GoJsonWriter::EndArray() {
  out_ += ']';
  has_items_.pop_back();
}

void GoJsonWriter::Key(std::string_view key) {
  BeforeValue();
  out_ += GoJsonQuote(key);
  out_ += ':';
  after_key_ = true;
}

void GoJsonWriter::String(std::string_view s) {
  BeforeValue();
  out_ += GoJsonQuote(s);
}

void GoJsonWriter::Int(int64_t v) {
  BeforeValue();
  out_ += std::to_string(v);
}

void GoJsonWriter::Bool(bool v) {
  BeforeValue();
  out_ += v ? "true" : "false";
}

void GoJsonWriter::Null() {
  BeforeValue();
  out_ += "null";
}

void GoJsonWriter::Raw(std::string_view json) {
  BeforeValue();
  out_ += json;
}

}  // namespace qrm::extender

#include "cluster/kube/kube_yaml.h"

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "common/quote.h"

namespace qrm::kube {
namespace {

// Deeper documents are refused: a kubeconfig is five levels deep, and the reader, the JSON
// conversion and the tree's destructor all recurse.
constexpr int kMaxDepth = 64;

struct Line {
  size_t begin = 0;    // offset of the line's first byte
  size_t end = 0;      // offset of its end, without "\n" or "\r\n"
  int number = 0;      // 1-based
  int indent = 0;      // leading spaces
  bool empty = false;  // nothing but blanks
  bool blank = false;  // empty, or a comment alone
};

bool IsSpace(char c) {
  return c == ' ' || c == '\t';
}

std::string LineError(int line, size_t column, std::string_view what) {
  return fmt::format("line {} column {}: {}", line, column + 1, what);
}

// Length of the UTF-8 sequence starting at text[i], or 0 when it is not well formed.
size_t Utf8Length(std::string_view text, size_t i) {
  const auto b = static_cast<unsigned char>(text[i]);
  size_t n = 0;
  if (b < 0x80) return 1;
  if (b >= 0xc2 && b <= 0xdf) n = 2;
  if (b >= 0xe0 && b <= 0xef) n = 3;
  if (b >= 0xf0 && b <= 0xf4) n = 4;
  if (n == 0 || i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(text[i + k]) & 0xc0) != 0x80) return 0;
  }
  const auto b1 = static_cast<unsigned char>(text[i + 1]);
  if ((b == 0xe0 && b1 < 0xa0) || (b == 0xed && b1 > 0x9f)) return 0;  // overlong, surrogate
  if ((b == 0xf0 && b1 < 0x90) || (b == 0xf4 && b1 > 0x8f)) return 0;  // overlong, > U+10FFFF
  return n;
}

// Splits the text into lines, refusing control characters and malformed UTF-8 anywhere.
Status SplitLines(std::string_view text, std::vector<Line>& lines) {
  size_t begin = 0;
  int number = 1;
  for (size_t i = 0; i <= text.size();) {
    if (i == text.size() || text[i] == '\n') {
      Line line{begin, i, number};
      if (line.end > line.begin && text[line.end - 1] == '\r') --line.end;
      while (line.begin + line.indent < line.end && text[line.begin + line.indent] == ' ') {
        ++line.indent;
      }
      size_t first = line.begin + line.indent;
      while (first < line.end && IsSpace(text[first])) ++first;
      line.empty = first == line.end;
      line.blank = line.empty || text[first] == '#';
      lines.push_back(line);
      begin = ++i;
      ++number;
      continue;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    const bool cr_lf = c == '\r' && i + 1 < text.size() && text[i + 1] == '\n';
    const size_t n = Utf8Length(text, i);
    if ((c < 0x20 && c != '\t' && !cr_lf) || c == 0x7f || n == 0) {
      return InvalidArgumentError(
          LineError(number, i - begin, n == 0 ? "malformed UTF-8" : "a control character"));
    }
    i += n;
  }
  return Status::Ok();
}

// A code point as UTF-8; false for a surrogate or a value past U+10FFFF.
bool AppendUtf8(uint32_t cp, std::string& out) {
  if ((cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) return false;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
  return true;
}

// The character a one-letter escape of a double-quoted scalar stands for, or 0 when the
// letter is not an escape (\x, \u and \U are read by the caller).
const char* SimpleEscape(char c) {
  switch (c) {
    case '0': return "\0";
    case 'a': return "\a";
    case 'b': return "\b";
    case 't':
    case '\t': return "\t";
    case 'n': return "\n";
    case 'v': return "\v";
    case 'f': return "\f";
    case 'r': return "\r";
    case 'e': return "\x1b";
    case ' ': return " ";
    case '"': return "\"";
    case '/': return "/";
    case '\\': return "\\";
    case 'N': return "\xc2\x85";
    case '_': return "\xc2\xa0";
    case 'L': return "\xe2\x80\xa8";
    case 'P': return "\xe2\x80\xa9";
    default: return nullptr;
  }
}

struct QuotedEnd {
  size_t line = 0;
  size_t column = 0;  // just past the closing quote
};

class YamlParser {
 public:
  explicit YamlParser(std::string_view text) : text_(text) {}

  StatusOr<DocNode> Parse();

 private:
  enum class Scan { kClosed, kOpen, kError };

  bool Failed() const { return !error_.ok(); }
  bool Fail(size_t line, size_t column, std::string_view what);
  bool AtEnd() const { return li_ >= lines_.size(); }
  std::string_view Content() const;
  size_t Pos() const { return lines_[li_].begin + col_; }
  bool NextContentLine();
  bool SkipLeadingMarker();
  void StartNode(DocNode& node) const;

  bool ParseBlockNode(int parent_indent, DocNode& out, int depth);
  bool ParseMap(int indent, DocNode& out, int depth);
  bool ParseMapEntry(int indent, DocNode& out, int depth);
  bool ParseEntryValue(int indent, DocNode& value, int depth);
  bool ParseSeq(int indent, DocNode& out, int depth);
  bool ParseItem(int indent, DocNode& item, int depth);
  bool ParseInline(int parent_indent, DocNode& out);
  bool ParseFlowEmpty(DocNode& out);
  bool ParsePlain(int parent_indent, DocNode& out);
  bool ParseQuotedValue(int parent_indent, DocNode& out);
  bool CheckLineRest(size_t line, size_t column);

  // Whether the content at the current position is "key:" (a plain or quoted key followed by
  // ':' and a blank or the line's end); fills the key and the column after the ':'.
  bool IsKeyLine(std::string* key, size_t* after_colon);
  static bool IsSeqItem(std::string_view content) {
    return !content.empty() && content[0] == '-' && (content.size() == 1 || IsSpace(content[1]));
  }
  Scan ScanQuoted(size_t line, size_t column, int parent_indent, bool single_line, std::string& out,
                  QuotedEnd& end);
  bool ScanEscape(size_t line, size_t& pos, std::string& out);

  std::string_view text_;
  std::vector<Line> lines_;
  size_t li_ = 0;   // the current line
  size_t col_ = 0;  // where its content starts: its indentation, or past a "- "
  Status error_;
};

bool YamlParser::Fail(size_t line, size_t column, std::string_view what) {
  if (error_.ok()) {
    error_ = InvalidArgumentError(LineError(
        line < lines_.size() ? lines_[line].number : static_cast<int>(line) + 1, column, what));
  }
  return false;
}

std::string_view YamlParser::Content() const {
  const Line& l = lines_[li_];
  return text_.substr(l.begin + col_, l.end - l.begin - col_);
}

void YamlParser::StartNode(DocNode& node) const {
  node.line = lines_[li_].number;
  node.column = static_cast<int>(col_) + 1;
}

// Moves to the next line that is not blank (from the current one, included), checking what
// may not start a line of structure.
bool YamlParser::NextContentLine() {
  while (li_ < lines_.size() && lines_[li_].blank) ++li_;
  if (AtEnd()) return true;
  const Line& l = lines_[li_];
  col_ = l.indent;
  const std::string_view c = Content();
  if (c[0] == '\t') return Fail(li_, col_, "a tab in indentation");
  if (l.indent == 0 && (c.substr(0, 3) == "---" || c.substr(0, 3) == "...")) {
    return Fail(li_, 0, "a second document (or a document end marker): not supported");
  }
  if (l.indent == 0 && c[0] == '%') return Fail(li_, 0, "a directive: not supported");
  return true;
}

// An optional "---" opens the document; nothing may follow it on its line but a comment.
bool YamlParser::SkipLeadingMarker() {
  while (li_ < lines_.size() && lines_[li_].blank) ++li_;
  if (AtEnd()) return true;
  const Line& l = lines_[li_];
  const std::string_view c = text_.substr(l.begin, l.end - l.begin);
  if (c.substr(0, 3) != "---" || (c.size() > 3 && !IsSpace(c[3]))) return true;
  size_t rest = 3;
  while (rest < c.size() && IsSpace(c[rest])) ++rest;
  if (rest < c.size() && c[rest] != '#') {
    return Fail(li_, rest, "content on the \"---\" line: not supported");
  }
  ++li_;
  return true;
}

StatusOr<DocNode> YamlParser::Parse() {
  if (text_.substr(0, 3) == "\xef\xbb\xbf") text_.remove_prefix(3);  // a byte order mark
  QRM_RETURN_IF_ERROR(SplitLines(text_, lines_));
  DocNode root;
  if (!SkipLeadingMarker() || !NextContentLine()) return error_;
  if (AtEnd()) return root;  // an empty document
  const std::string_view c = Content();
  std::string key;
  size_t after = 0;
  if (!IsSeqItem(c) && !IsKeyLine(&key, &after)) {
    if (Failed()) return error_;
    Fail(li_, col_, "the document is not a mapping or a sequence");
    return error_;
  }
  if (!ParseBlockNode(-1, root, 0)) return error_;
  if (!AtEnd()) {
    Fail(li_, col_, "content less indented than what came before it");
    return error_;
  }
  return root;
}

bool YamlParser::ParseBlockNode(int parent_indent, DocNode& out, int depth) {
  if (depth > kMaxDepth) return Fail(li_, col_, "nested too deeply");
  const int indent = static_cast<int>(col_);
  if (IsSeqItem(Content())) return ParseSeq(indent, out, depth);
  std::string key;
  size_t after = 0;
  if (IsKeyLine(&key, &after)) return ParseMap(indent, out, depth);
  if (Failed()) return false;
  return ParseInline(parent_indent, out);
}

bool YamlParser::ParseMap(int indent, DocNode& out, int depth) {
  out.kind = DocNode::Kind::kMap;
  StartNode(out);
  while (true) {
    if (!ParseMapEntry(indent, out, depth)) return false;
    if (AtEnd()) return true;
    const int next = lines_[li_].indent;
    if (next > indent) return Fail(li_, col_, "unexpected indentation");
    if (next < indent || IsSeqItem(Content())) return true;
  }
}

bool YamlParser::ParseMapEntry(int indent, DocNode& out, int depth) {
  std::string key;
  size_t after = 0;
  if (!IsKeyLine(&key, &after)) {
    if (Failed()) return false;
    return Fail(li_, col_, "expected a \"key: value\" line of the mapping");
  }
  if (out.Find(key) != nullptr) {
    return Fail(li_, col_, fmt::format("the key {} appears twice", Quote(key)));
  }
  col_ = after;
  while (col_ < lines_[li_].end - lines_[li_].begin && IsSpace(text_[Pos()])) ++col_;
  DocNode value;
  if (!ParseEntryValue(indent, value, depth)) return false;
  out.entries.push_back(DocEntry{std::move(key), std::move(value)});
  return true;
}

// The value after "key:": on the same line, or below it (more indented, or a sequence at the
// key's own indentation as kubectl writes them).
bool YamlParser::ParseEntryValue(int indent, DocNode& value, int depth) {
  const std::string_view rest = Content();
  if (!rest.empty() && rest[0] != '#') return ParseInline(indent, value);
  StartNode(value);
  ++li_;
  if (!NextContentLine()) return false;
  if (AtEnd()) return true;
  const int next = lines_[li_].indent;
  if (next > indent) return ParseBlockNode(indent, value, depth + 1);
  if (next == indent && IsSeqItem(Content())) {
    if (depth + 1 > kMaxDepth) return Fail(li_, col_, "nested too deeply");
    return ParseSeq(indent, value, depth + 1);
  }
  return true;  // null
}

bool YamlParser::ParseSeq(int indent, DocNode& out, int depth) {
  out.kind = DocNode::Kind::kSeq;
  StartNode(out);
  while (true) {
    DocNode item;
    if (!ParseItem(indent, item, depth)) return false;
    out.items.push_back(std::move(item));
    if (AtEnd()) return true;
    const int next = lines_[li_].indent;
    if (next > indent) return Fail(li_, col_, "unexpected indentation");
    if (next < indent || !IsSeqItem(Content())) return true;
  }
}

// One "- " item: its value starts after the dash (a mapping's first key, a nested item, a
// scalar) or on the lines below, more indented.
bool YamlParser::ParseItem(int indent, DocNode& item, int depth) {
  if (depth + 1 > kMaxDepth) return Fail(li_, col_, "nested too deeply");
  ++col_;
  while (col_ < lines_[li_].end - lines_[li_].begin && text_[Pos()] == ' ') ++col_;
  const std::string_view rest = Content();
  if (rest.empty() || rest[0] == '#') {
    StartNode(item);
    ++li_;
    if (!NextContentLine()) return false;
    if (AtEnd() || lines_[li_].indent <= indent) return true;  // null
    return ParseBlockNode(indent, item, depth + 1);
  }
  if (rest[0] == '\t') return Fail(li_, col_, "a tab after \"-\"");
  return ParseBlockNode(indent, item, depth + 1);
}

bool YamlParser::IsKeyLine(std::string* key, size_t* after_colon) {
  const std::string_view c = Content();
  if (c.empty()) return false;
  size_t colon = std::string_view::npos;
  if (c[0] == '"' || c[0] == '\'') {
    QuotedEnd end;
    key->clear();
    if (ScanQuoted(li_, col_, -1, true, *key, end) != Scan::kClosed) return false;
    size_t i = end.column - col_;
    while (i < c.size() && IsSpace(c[i])) ++i;
    if (i < c.size() && c[i] == ':') colon = i;
  } else {
    for (size_t i = 0; i < c.size(); ++i) {
      if (c[i] == '#' && i > 0 && IsSpace(c[i - 1])) break;
      if (c[i] == ':' && (i + 1 == c.size() || IsSpace(c[i + 1]))) {
        colon = i;
        break;
      }
    }
    if (colon == std::string_view::npos) return false;
    size_t end = colon;
    while (end > 0 && IsSpace(c[end - 1])) --end;
    *key = std::string(c.substr(0, end));
    if (key->empty()) return Fail(li_, col_, "an empty key");
    if (std::string_view("?&*!|>%@`{}[],#").find(c[0]) != std::string_view::npos) {
      return Fail(li_, col_,
                  fmt::format("a key starting with {}: not supported", Quote(c.substr(0, 1))));
    }
  }
  if (colon == std::string_view::npos) return false;
  if (colon + 1 < c.size() && !IsSpace(c[colon + 1])) return false;
  *after_colon = col_ + colon + 1;
  return true;
}

// A scalar or an empty flow collection starting at the current position.
bool YamlParser::ParseInline(int parent_indent, DocNode& out) {
  StartNode(out);
  const std::string_view c = Content();
  switch (c[0]) {
    case '&':
    case '*':
    case '!': return Fail(li_, col_, "anchors, aliases and tags: not supported");
    case '|':
    case '>': return Fail(li_, col_, "block scalars (| and >): not supported");
    case '{':
    case '[': return ParseFlowEmpty(out);
    case '"':
    case '\'': return ParseQuotedValue(parent_indent, out);
    case '%':
    case '@':
    case '`':
    case ',':
    case ']':
    case '}':
      return Fail(li_, col_,
                  fmt::format("a value starting with {}: not supported", Quote(c.substr(0, 1))));
    default: break;
  }
  if ((c[0] == '-' || c[0] == '?' || c[0] == ':') && (c.size() == 1 || IsSpace(c[1]))) {
    return Fail(li_, col_,
                fmt::format("{} here: not supported (a block collection must start "
                            "on a line of its own)",
                            Quote(c.substr(0, 1))));
  }
  return ParsePlain(parent_indent, out);
}

bool YamlParser::ParseFlowEmpty(DocNode& out) {
  const std::string_view c = Content();
  const char close = c[0] == '{' ? '}' : ']';
  size_t i = 1;
  while (i < c.size() && IsSpace(c[i])) ++i;
  if (i == c.size() || c[i] != close) {
    return Fail(li_, col_, "flow collections other than {} and []: not supported");
  }
  out.kind = close == '}' ? DocNode::Kind::kMap : DocNode::Kind::kSeq;
  return CheckLineRest(li_, col_ + i + 1);
}

// After a value: blanks and a comment, then the next line of content.
bool YamlParser::CheckLineRest(size_t line, size_t column) {
  const Line& l = lines_[line];
  size_t i = l.begin + column;
  const size_t start = i;
  while (i < l.end && IsSpace(text_[i])) ++i;
  if (i < l.end && (text_[i] != '#' || i == start)) {
    return Fail(line, i - l.begin, "unexpected text after the value");
  }
  li_ = line + 1;
  return NextContentLine();
}

bool YamlParser::ParseQuotedValue(int parent_indent, DocNode& out) {
  QuotedEnd end;
  out.kind = DocNode::Kind::kScalar;
  out.quoted = true;
  if (ScanQuoted(li_, col_, parent_indent, false, out.scalar, end) != Scan::kClosed) return false;
  return CheckLineRest(end.line, end.column);
}

// A plain scalar: to the end of the line or a comment, and on the following more indented
// lines (folded: one line break is a space, n empty lines are n line breaks), as kubectl
// writes a long value.
bool YamlParser::ParsePlain(int parent_indent, DocNode& out) {
  out.kind = DocNode::Kind::kScalar;
  std::string separator;  // what the line break before this line folds into
  while (true) {
    const std::string_view c = Content();
    size_t end = 0;
    bool comment = false;
    for (; end < c.size(); ++end) {
      if (c[end] == '#' && end > 0 && IsSpace(c[end - 1])) {
        comment = true;
        break;
      }
      if (c[end] == ':' && (end + 1 == c.size() || IsSpace(c[end + 1]))) {
        return Fail(li_, col_ + end, "\": \" inside a plain value (quote the value)");
      }
    }
    while (end > 0 && IsSpace(c[end - 1])) --end;
    out.scalar += separator;
    out.scalar += c.substr(0, end);
    size_t next = li_ + 1;
    size_t breaks = 0;
    for (; next < lines_.size() && lines_[next].empty; ++next) ++breaks;
    if (comment || next >= lines_.size() || lines_[next].blank ||
        lines_[next].indent <= parent_indent) {
      break;
    }
    separator = breaks > 0 ? std::string(breaks, '\n') : " ";
    li_ = next;
    col_ = lines_[li_].indent;
    if (text_[Pos()] == '\t') return Fail(li_, col_, "a tab in indentation");
  }
  if (out.scalar == "~" || out.scalar == "null" || out.scalar == "Null" || out.scalar == "NULL") {
    out.kind = DocNode::Kind::kNull;
    out.scalar.clear();
  }
  ++li_;
  return NextContentLine();
}

// Reads a quoted scalar starting at (line, column) into `out`. Line breaks fold as in YAML:
// trailing blanks dropped, one break a space, n empty lines n breaks, a backslash at the end
// of a double-quoted line joins the lines. With `single_line` (keys), reaching the line's end
// is kOpen, not an error.
YamlParser::Scan YamlParser::ScanQuoted(size_t line, size_t column, int parent_indent,
                                        bool single_line, std::string& out, QuotedEnd& end) {
  const char q = text_[lines_[line].begin + column];
  size_t pos = lines_[line].begin + column + 1;
  bool joined = false;  // the last line ended in an escaped line break
  for (size_t j = line;;) {
    std::string blanks;
    for (; pos < lines_[j].end; ++pos) {
      const char c = text_[pos];
      if (c == q && q == '\'' && pos + 1 < lines_[j].end && text_[pos + 1] == '\'') {
        out += blanks + '\'';
        blanks.clear();
        ++pos;
      } else if (c == q) {
        out += blanks;
        end = {j, pos + 1 - lines_[j].begin};
        return Scan::kClosed;
      } else if (IsSpace(c)) {
        blanks += c;
      } else if (q == '"' && c == '\\' && pos + 1 == lines_[j].end) {
        out += blanks;
        joined = true;
      } else if (q == '"' && c == '\\') {
        out += blanks;
        blanks.clear();
        if (!ScanEscape(j, pos, out)) return Scan::kError;
      } else {
        out += blanks + c;
        blanks.clear();
      }
    }
    if (single_line) return Scan::kOpen;
    int breaks = 0;
    for (++j; j < lines_.size() && lines_[j].empty; ++j) ++breaks;
    if (j >= lines_.size()) {
      Fail(line, column, "a quoted value without its closing quote");
      return Scan::kError;
    }
    if (lines_[j].indent <= parent_indent) {
      Fail(j, lines_[j].indent, "a quoted value continued on a line not indented below its key");
      return Scan::kError;
    }
    out += breaks > 0 ? std::string(breaks, '\n') : (joined ? "" : " ");
    joined = false;
    for (pos = lines_[j].begin; pos < lines_[j].end && IsSpace(text_[pos]);) ++pos;
  }
}

// One escape of a double-quoted scalar; `pos` is at the backslash and is left on the escape's
// last character.
bool YamlParser::ScanEscape(size_t line, size_t& pos, std::string& out) {
  const Line& l = lines_[line];
  const char e = text_[pos + 1];
  if (const char* simple = SimpleEscape(e)) {
    out.append(simple, e == '0' ? 1 : std::char_traits<char>::length(simple));
    ++pos;
    return true;
  }
  const size_t digits = e == 'x' ? 2 : e == 'u' ? 4 : e == 'U' ? 8 : 0;
  if (digits == 0) {
    return Fail(line, pos - l.begin,
                fmt::format("an unknown escape {}", Quote(text_.substr(pos, 2))));
  }
  if (pos + 2 + digits > l.end) return Fail(line, pos - l.begin, "a truncated escape");
  uint32_t cp = 0;
  for (size_t k = 0; k < digits; ++k) {
    const char h = text_[pos + 2 + k];
    const int v = h >= '0' && h <= '9'   ? h - '0'
                  : h >= 'a' && h <= 'f' ? h - 'a' + 10
                  : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                         : -1;
    if (v < 0) return Fail(line, pos - l.begin, "an escape with a non-hex digit");
    cp = cp * 16 + static_cast<uint32_t>(v);
  }
  if (!AppendUtf8(cp, out)) {
    return Fail(line, pos - l.begin, "an escape outside Unicode scalar values");
  }
  pos += 1 + digits;
  return true;
}

// --- JSON ---

std::pair<int, int> LineAndColumn(std::string_view text, size_t offset) {
  int line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return {line, static_cast<int>(offset - line_start) + 1};
}

Status FromJson(const rapidjson::Value& v, int depth, DocNode& out) {
  if (depth > kMaxDepth) return InvalidArgumentError("JSON nested too deeply");
  if (v.IsObject()) {
    out.kind = DocNode::Kind::kMap;
    for (const auto& m : v.GetObject()) {
      std::string key(m.name.GetString(), m.name.GetStringLength());
      if (out.Find(key) != nullptr) {
        return InvalidArgumentError(fmt::format("the key {} appears twice", Quote(key)));
      }
      DocNode value;
      QRM_RETURN_IF_ERROR(FromJson(m.value, depth + 1, value));
      out.entries.push_back(DocEntry{std::move(key), std::move(value)});
    }
  } else if (v.IsArray()) {
    out.kind = DocNode::Kind::kSeq;
    for (const auto& item : v.GetArray()) {
      DocNode node;
      QRM_RETURN_IF_ERROR(FromJson(item, depth + 1, node));
      out.items.push_back(std::move(node));
    }
  } else if (v.IsString()) {  // numbers too (kParseNumbersAsStringsFlag)
    out.kind = DocNode::Kind::kScalar;
    out.scalar.assign(v.GetString(), v.GetStringLength());
    out.quoted = true;
  } else if (v.IsBool()) {
    out.kind = DocNode::Kind::kScalar;
    out.scalar = v.GetBool() ? "true" : "false";
  }
  return Status::Ok();
}

void WriteJson(const DocNode& node, rapidjson::Writer<rapidjson::StringBuffer>& w) {
  switch (node.kind) {
    case DocNode::Kind::kNull: w.Null(); break;
    case DocNode::Kind::kScalar:
      w.String(node.scalar.data(), static_cast<rapidjson::SizeType>(node.scalar.size()));
      break;
    case DocNode::Kind::kMap:
      w.StartObject();
      for (const auto& [key, value] : node.entries) {
        w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
        WriteJson(value, w);
      }
      w.EndObject();
      break;
    case DocNode::Kind::kSeq:
      w.StartArray();
      for (const DocNode& item : node.items) WriteJson(item, w);
      w.EndArray();
      break;
  }
}

}  // namespace

const DocNode* DocNode::Find(std::string_view key) const {
  for (const auto& [k, v] : entries) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::string_view KindName(DocNode::Kind kind) {
  switch (kind) {
    case DocNode::Kind::kNull: return "null";
    case DocNode::Kind::kScalar: return "a string";
    case DocNode::Kind::kMap: return "a mapping";
    case DocNode::Kind::kSeq: return "a sequence";
  }
  return "?";
}

StatusOr<DocNode> ParseYaml(std::string_view text) {
  return YamlParser(text).Parse();
}

StatusOr<DocNode> ParseJson(std::string_view text) {
  rapidjson::Document doc;
  constexpr unsigned kFlags = rapidjson::kParseIterativeFlag |
                              rapidjson::kParseNumbersAsStringsFlag |
                              rapidjson::kParseValidateEncodingFlag;
  doc.Parse<kFlags>(text.data(), text.size());
  if (doc.HasParseError()) {
    const auto [line, column] = LineAndColumn(text, doc.GetErrorOffset());
    return InvalidArgumentError(fmt::format("line {} column {}: {}", line, column,
                                            rapidjson::GetParseError_En(doc.GetParseError())));
  }
  DocNode root;
  QRM_RETURN_IF_ERROR(FromJson(doc, 0, root));
  return root;
}

StatusOr<DocNode> ParseYamlOrJson(std::string_view text) {
  const size_t bom = text.substr(0, 3) == "\xef\xbb\xbf" ? 3 : 0;
  size_t i = bom;
  while (i < text.size() && (IsSpace(text[i]) || text[i] == '\n' || text[i] == '\r')) ++i;
  if (i < text.size() && text[i] == '{') return ParseJson(text.substr(bom));
  return ParseYaml(text);
}

std::string ToJson(const DocNode& node) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  WriteJson(node, writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace qrm::kube

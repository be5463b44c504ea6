#include "cluster/extender/go_json_reader.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>

#include <fmt/format.h>
#include <rapidjson/encodedstream.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include "cluster/extender/go_json_writer.h"
#include "common/quote.h"

namespace qrm::extender {
namespace {

using rapidjson::SizeType;

// Passes the reader's events on to the document that is being built, with two changes: each
// number is copied into `numbers` and stored as a string pointing there (so the document keeps
// the number's text, and JsonDocument::IsNumber knows it by its address), and nesting deeper
// than kMaxJsonDepth stops the parse.
class Forwarder {
 public:
  Forwarder(rapidjson::Document& doc, char* numbers, size_t& used)
      : doc_(doc), numbers_(numbers), used_(used) {}

  bool Null() { return doc_.Null(); }
  bool Bool(bool b) { return doc_.Bool(b); }
  // With kParseNumbersAsStringsFlag every number comes as RawNumber; these are never called.
  bool Int(int) { return false; }
  bool Uint(unsigned) { return false; }
  bool Int64(int64_t) { return false; }
  bool Uint64(uint64_t) { return false; }
  bool Double(double) { return false; }
  bool RawNumber(const char* s, SizeType n, bool) {
    char* text = numbers_ + used_;
    std::memcpy(text, s, n);
    used_ += n;
    return doc_.RawNumber(text, n, /*copy=*/false);
  }
  bool String(const char* s, SizeType n, bool copy) { return doc_.String(s, n, copy); }
  bool Key(const char* s, SizeType n, bool copy) { return doc_.Key(s, n, copy); }
  bool StartObject() { return Deeper() && doc_.StartObject(); }
  bool EndObject(SizeType members) {
    --depth_;
    return doc_.EndObject(members);
  }
  bool StartArray() { return Deeper() && doc_.StartArray(); }
  bool EndArray(SizeType elements) {
    --depth_;
    return doc_.EndArray(elements);
  }

  bool too_deep() const { return too_deep_; }

 private:
  bool Deeper() {
    too_deep_ = ++depth_ > kMaxJsonDepth;
    return !too_deep_;
  }

  rapidjson::Document& doc_;
  char* numbers_;
  size_t& used_;
  int depth_ = 0;
  bool too_deep_ = false;
};

// A key as a path shows it: as it is when it is a plain word, quoted otherwise.
std::string KeyText(std::string_view key) {
  const bool plain = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
  });
  return plain ? std::string(key) : Quote(key);
}

char LowerAscii(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

// The white space Go's strings.TrimSpace removes that can stand unescaped in a JSON string
// (Go trims the raw text, where control characters only appear as escapes, which it keeps).
constexpr std::string_view kGoSpaces[] = {" ",      "\u0085", "\u00a0", "\u1680", "\u2000",
                                          "\u2001", "\u2002", "\u2003", "\u2004", "\u2005",
                                          "\u2006", "\u2007", "\u2008", "\u2009", "\u200a",
                                          "\u2028", "\u2029", "\u202f", "\u205f", "\u3000"};

std::string_view TrimGoSpace(std::string_view s) {
  for (bool trimmed = true; trimmed;) {
    trimmed = false;
    for (const std::string_view space : kGoSpaces) {
      if (s.starts_with(space)) {
        s.remove_prefix(space.size());
        trimmed = true;
      }
      if (s.ends_with(space)) {
        s.remove_suffix(space.size());
        trimmed = true;
      }
    }
  }
  return s;
}

void WriteScalar(const JsonDocument& doc, const JsonValue& v, GoJsonWriter& w) {
  if (v.IsNull()) {
    w.Null();
  } else if (v.IsBool()) {
    w.Bool(v.GetBool());
  } else if (doc.IsNumber(v)) {
    w.Raw(std::string_view(v.GetString(), v.GetStringLength()));
  } else {
    w.String(std::string_view(v.GetString(), v.GetStringLength()));
  }
}

}  // namespace

Status JsonDocument::Parse(std::string_view text) {
  doc_.SetNull();
  numbers_ = std::make_unique<char[]>(text.size() + 1);  // numbers never outgrow the text
  numbers_size_ = 0;
  rapidjson::MemoryStream memory(text.data(), text.size());
  rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream> in(memory);
  rapidjson::Reader reader;
  bool too_deep = false;
  auto generate = [&](rapidjson::Document& handler) {
    Forwarder forwarder(handler, numbers_.get(), numbers_size_);
    constexpr unsigned kFlags = rapidjson::kParseIterativeFlag |
                                rapidjson::kParseNumbersAsStringsFlag |
                                rapidjson::kParseValidateEncodingFlag;
    reader.Parse<kFlags>(in, forwarder);
    too_deep = forwarder.too_deep();
    return !reader.HasParseError();
  };
  doc_.Populate(generate);
  if (!reader.HasParseError()) return Status::Ok();
  doc_.SetNull();
  const std::string why = too_deep ? fmt::format("nested deeper than {} levels", kMaxJsonDepth)
                                   : rapidjson::GetParseError_En(reader.GetParseErrorCode());
  return InvalidArgumentError(
      fmt::format("invalid JSON at byte {}: {}", reader.GetErrorOffset(), why));
}

bool JsonDocument::IsNumber(const JsonValue& v) const {
  if (!v.IsString() || numbers_ == nullptr) return false;
  const auto at = reinterpret_cast<uintptr_t>(v.GetString());
  const auto begin = reinterpret_cast<uintptr_t>(numbers_.get());
  return at >= begin && at < begin + numbers_size_;
}

// Without recursion: a document may be kMaxJsonDepth deep.
std::string JsonDocument::Text(const JsonValue& root) const {
  GoJsonWriter w;
  struct Open {
    const JsonValue* container;
    SizeType next;
  };
  std::vector<Open> open;
  const auto write = [&](const JsonValue& v) {
    if (v.IsObject()) {
      w.BeginObject();
      open.push_back({&v, 0});
    } else if (v.IsArray()) {
      w.BeginArray();
      open.push_back({&v, 0});
    } else {
      WriteScalar(*this, v, w);
    }
  };
  write(root);
  while (!open.empty()) {
    const JsonValue& c = *open.back().container;
    const SizeType i = open.back().next++;
    if (c.IsObject() && i < c.MemberCount()) {
      const auto& member = c.MemberBegin()[i];
      w.Key(std::string_view(member.name.GetString(), member.name.GetStringLength()));
      write(member.value);
    } else if (c.IsArray() && i < c.Size()) {
      write(c[i]);
    } else if (c.IsObject()) {
      w.EndObject();
      open.pop_back();
    } else {
      w.EndArray();
      open.pop_back();
    }
  }
  return w.Take();
}

std::string JsonPath::ToString() const {
  std::vector<const JsonPath*> steps;
  for (const JsonPath* p = this; p->parent_ != nullptr; p = p->parent_) steps.push_back(p);
  if (steps.empty()) return "(top)";
  std::string text;
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
    const JsonPath& step = **it;
    if (step.index_ != kNoIndex) {
      text += fmt::format("[{}]", step.index_);
    } else {
      text += (text.empty() ? "" : ".") + KeyText(step.key_);
    }
  }
  return text;
}

bool GoKeyMatches(std::string_view key, std::string_view name) {
  size_t k = 0;
  for (const char want : name) {
    if (k >= key.size()) return false;
    char got = key[k];
    if (key.substr(k, 2) == "\xc5\xbf") {  // LATIN SMALL LETTER LONG S folds to s
      got = 's';
      k += 2;
    } else if (key.substr(k, 3) == "\xe2\x84\xaa") {  // KELVIN SIGN folds to k
      got = 'k';
      k += 3;
    } else {
      ++k;
    }
    if (LowerAscii(got) != LowerAscii(want)) return false;
  }
  return k == key.size();
}

Status GoDecoder::Error(const JsonPath& path, std::string_view message) const {
  return InvalidArgumentError(fmt::format("{}: {}: {}", type_, path.ToString(), message));
}

Status GoDecoder::TypeError(const JsonPath& path, const JsonValue& v,
                            std::string_view expected) const {
  return Error(path, fmt::format("expected {}, got {}", expected, Describe(v)));
}

std::string GoDecoder::Describe(const JsonValue& v) const {
  if (v.IsNull()) return "null";
  if (v.IsBool()) return v.GetBool() ? "true" : "false";
  if (v.IsObject()) return "an object";
  if (v.IsArray()) return "an array";
  const std::string_view text(v.GetString(), v.GetStringLength());
  return IsNumber(v) ? std::string(text.substr(0, 64)) : Quote(text);
}

Status GoDecoder::ReadString(const JsonValue& v, const JsonPath& path, std::string& out) const {
  if (v.IsNull()) return Status::Ok();
  if (!IsString(v)) return TypeError(path, v, "a string");
  out.assign(v.GetString(), v.GetStringLength());
  return Status::Ok();
}

Status GoDecoder::ReadInteger(const JsonValue& v, const JsonPath& path, int64_t min, int64_t max,
                              std::string_view expected, int64_t& out) const {
  if (!IsNumber(v)) return TypeError(path, v, expected);
  const std::string_view text(v.GetString(), v.GetStringLength());
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    return TypeError(path, v, expected);  // Go: cannot unmarshal number 1.5 into ... int32
  }
  out = value;
  return Status::Ok();
}

Status GoDecoder::ReadInt64(const JsonValue& v, const JsonPath& path, int64_t& out) const {
  if (v.IsNull()) return Status::Ok();
  return ReadInteger(v, path, std::numeric_limits<int64_t>::min(),
                     std::numeric_limits<int64_t>::max(), "an int64", out);
}

Status GoDecoder::ReadInt32(const JsonValue& v, const JsonPath& path, int32_t& out) const {
  if (v.IsNull()) return Status::Ok();
  int64_t value = 0;
  QRM_RETURN_IF_ERROR(ReadInteger(v, path, std::numeric_limits<int32_t>::min(),
                                  std::numeric_limits<int32_t>::max(), "an int32", value));
  out = static_cast<int32_t>(value);
  return Status::Ok();
}

Status GoDecoder::ReadOptionalInt32(const JsonValue& v, const JsonPath& path,
                                    std::optional<int32_t>& out) const {
  if (v.IsNull()) {
    out.reset();
    return Status::Ok();
  }
  int32_t value = 0;
  QRM_RETURN_IF_ERROR(ReadInt32(v, path, value));
  out = value;
  return Status::Ok();
}

Status GoDecoder::ReadQuantity(const JsonValue& v, const JsonPath& path, Quantity& out) const {
  if (v.IsNull()) {
    out = Quantity();
    return Status::Ok();
  }
  if (!v.IsString()) return TypeError(path, v, "a quantity");
  const std::string_view written(v.GetString(), v.GetStringLength());
  const std::string_view text = IsNumber(v) ? written : TrimGoSpace(written);
  StatusOr<Quantity> q = Quantity::Parse(text);
  if (!q.ok()) {
    // Parse's message starts by naming the text; ours names the value as written instead.
    std::string_view why = q.status().message();
    const std::string prefix = fmt::format("quantity {}: ", Quote(text));
    if (why.starts_with(prefix)) why.remove_prefix(prefix.size());
    return Error(path, fmt::format("{} is not a quantity: {}", Describe(v), why));
  }
  out = std::move(*q);
  return Status::Ok();
}

Status GoDecoder::ReadStringList(const JsonValue& v, const JsonPath& path,
                                 std::vector<std::string>& out) const {
  return ReadList(v, path, out, [&](std::string& s, const JsonValue& e, const JsonPath& p) {
    return ReadString(e, p, s);
  });
}

Status GoDecoder::ReadOptionalStringList(const JsonValue& v, const JsonPath& path,
                                         std::optional<std::vector<std::string>>& out) const {
  if (v.IsNull()) {
    out.reset();
    return Status::Ok();
  }
  if (!v.IsArray()) return TypeError(path, v, "an array");
  if (!out) out.emplace();
  return ReadStringList(v, path, *out);
}

Status GoDecoder::ReadStringMap(const JsonValue& v, const JsonPath& path,
                                std::map<std::string, std::string>& out) const {
  return ReadMap(v, path, out, [&](std::string& s, const JsonValue& e, const JsonPath& p) {
    return ReadString(e, p, s);
  });
}

Status GoDecoder::ReadQuantityMap(const JsonValue& v, const JsonPath& path,
                                  std::map<std::string, Quantity>& out) const {
  return ReadMap(v, path, out, [&](Quantity& q, const JsonValue& e, const JsonPath& p) {
    return ReadQuantity(e, p, q);
  });
}

}  // namespace qrm::extender

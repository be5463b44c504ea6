#include "checkpoint/canonical_json.h"

#include <algorithm>
#include <iterator>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace qrm::checkpoint {
namespace {

std::string_view StringOf(const rapidjson::Value& v) {
  return {v.GetString(), v.GetStringLength()};
}

// Returns the length of the valid UTF-8 sequence starting at s[i], or 0.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) return 1;
  size_t len = 0;
  uint32_t cp = 0;
  if ((b0 & 0xe0) == 0xc0) {
    len = 2;
    cp = b0 & 0x1f;
  } else if ((b0 & 0xf0) == 0xe0) {
    len = 3;
    cp = b0 & 0x0f;
  } else if ((b0 & 0xf8) == 0xf0) {
    len = 4;
    cp = b0 & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3f);
  }
  // Reject overlong forms, surrogates and code points beyond U+10FFFF.
  static constexpr uint32_t kMinForLength[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMinForLength[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return len;
}

// Serializes canonically. The path of the value being written ("data.pods[3].name") is only
// needed for error messages, so it is kept as a stack of segments and formatted on error:
// checkpoints are written on every admission, and building a path string per member cost
// more than the serialization itself.
class Writer {
 public:
  Status Write(const rapidjson::Value& v) {
    switch (v.GetType()) {
      case rapidjson::kNullType: out_ += "null"; return Status::Ok();
      case rapidjson::kFalseType: out_ += "false"; return Status::Ok();
      case rapidjson::kTrueType: out_ += "true"; return Status::Ok();
      case rapidjson::kStringType: return WriteString(StringOf(v));
      case rapidjson::kNumberType: return WriteNumber(v);
      case rapidjson::kArrayType: return WriteArray(v);
      case rapidjson::kObjectType: return WriteObject(v);
    }
    return InternalError(fmt::format("{}: unknown JSON type", Path()));
  }

  std::string Take() { return std::move(out_); }

 private:
  struct Segment {
    std::string_view key;  // empty for an array element
    size_t index = 0;
  };

  std::string Path() const {
    std::string path = "data";
    for (const Segment& s : path_) {
      path += s.key.empty() ? fmt::format("[{}]", s.index) : fmt::format(".{}", s.key);
    }
    return path;
  }

  Status WriteNumber(const rapidjson::Value& v) {
    if (v.IsInt64()) {
      fmt::format_to(std::back_inserter(out_), "{}", v.GetInt64());
    } else if (v.IsUint64()) {
      fmt::format_to(std::back_inserter(out_), "{}", v.GetUint64());
    } else {
      return InvalidArgumentError(fmt::format(
          "{}: floating-point number {} is not allowed in checkpoint data (store an integer "
          "in smaller units, or a string)",
          Path(), v.GetDouble()));
    }
    return Status::Ok();
  }

  static bool Plain(unsigned char c) { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\'; }

  Status WriteString(std::string_view s) {
    out_ += '"';
    for (size_t i = 0; i < s.size();) {
      // Runs of printable ASCII (almost everything in a checkpoint) are copied at once.
      size_t run = i;
      while (run < s.size() && Plain(static_cast<unsigned char>(s[run]))) ++run;
      if (run > i) {
        out_.append(s.data() + i, run - i);
        i = run;
        continue;
      }
      const size_t len = Utf8SequenceLength(s, i);
      if (len == 0) {
        return InvalidArgumentError(fmt::format(
            "{}: string is not valid UTF-8 at byte {} (store binary data base64-encoded)", Path(),
            i));
      }
      const auto c = static_cast<unsigned char>(s[i]);
      if (len == 1) {
        switch (c) {
          case '"': out_ += "\\\""; break;
          case '\\': out_ += "\\\\"; break;
          case '\b': out_ += "\\b"; break;
          case '\f': out_ += "\\f"; break;
          case '\n': out_ += "\\n"; break;
          case '\r': out_ += "\\r"; break;
          case '\t': out_ += "\\t"; break;
          default: fmt::format_to(std::back_inserter(out_), "\\u{:04x}", c);
        }
      } else {
        out_.append(s.substr(i, len));
      }
      i += len;
    }
    out_ += '"';
    return Status::Ok();
  }

  Status WriteArray(const rapidjson::Value& v) {
    out_ += '[';
    for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
      if (i > 0) out_ += ',';
      path_.push_back({{}, i});
      Status s = Write(v[i]);
      path_.pop_back();
      QRM_RETURN_IF_ERROR(s);
    }
    out_ += ']';
    return Status::Ok();
  }

  Status WriteObject(const rapidjson::Value& v) {
    std::vector<const rapidjson::Value::Member*> members;
    members.reserve(v.MemberCount());
    for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) members.push_back(&*it);
    std::sort(members.begin(), members.end(),
              [](const auto* a, const auto* b) { return StringOf(a->name) < StringOf(b->name); });
    out_ += '{';
    for (size_t i = 0; i < members.size(); ++i) {
      const std::string_view key = StringOf(members[i]->name);
      if (i > 0) {
        if (key == StringOf(members[i - 1]->name)) {
          return InvalidArgumentError(fmt::format("{}: duplicate key \"{}\"", Path(), key));
        }
        out_ += ',';
      }
      // An empty key would read as an array index in the path; show it quoted.
      path_.push_back({key.empty() ? std::string_view("\"\"") : key, 0});
      Status s = WriteString(key);
      if (s.ok()) {
        out_ += ':';
        s = Write(members[i]->value);
      }
      path_.pop_back();
      QRM_RETURN_IF_ERROR(s);
    }
    out_ += '}';
    return Status::Ok();
  }

  std::string out_;
  std::vector<Segment> path_;
};

}  // namespace

StatusOr<std::string> CanonicalJson(const rapidjson::Value& value) {
  Writer writer;
  QRM_RETURN_IF_ERROR(writer.Write(value));
  return writer.Take();
}

}  // namespace qrm::checkpoint

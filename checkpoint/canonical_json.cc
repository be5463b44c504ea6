#include "checkpoint/canonical_json.h"

#include <algorithm>
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

class Writer {
 public:
  Status Write(const rapidjson::Value& v, const std::string& path) {
    switch (v.GetType()) {
      case rapidjson::kNullType: out_ += "null"; return Status::Ok();
      case rapidjson::kFalseType: out_ += "false"; return Status::Ok();
      case rapidjson::kTrueType: out_ += "true"; return Status::Ok();
      case rapidjson::kStringType: return WriteString(StringOf(v), path);
      case rapidjson::kNumberType: return WriteNumber(v, path);
      case rapidjson::kArrayType: return WriteArray(v, path);
      case rapidjson::kObjectType: return WriteObject(v, path);
    }
    return InternalError(fmt::format("{}: unknown JSON type", path));
  }

  std::string Take() { return std::move(out_); }

 private:
  Status WriteNumber(const rapidjson::Value& v, const std::string& path) {
    if (v.IsInt64()) {
      out_ += fmt::format("{}", v.GetInt64());
    } else if (v.IsUint64()) {
      out_ += fmt::format("{}", v.GetUint64());
    } else {
      return InvalidArgumentError(fmt::format(
          "{}: floating-point number {} is not allowed in checkpoint data (store an integer "
          "in smaller units, or a string)",
          path, v.GetDouble()));
    }
    return Status::Ok();
  }

  Status WriteString(std::string_view s, const std::string& path) {
    out_ += '"';
    for (size_t i = 0; i < s.size();) {
      const size_t len = Utf8SequenceLength(s, i);
      if (len == 0) {
        return InvalidArgumentError(fmt::format(
            "{}: string is not valid UTF-8 at byte {} (store binary data base64-encoded)", path,
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
          default:
            if (c < 0x20) {
              out_ += fmt::format("\\u{:04x}", c);
            } else {
              out_ += static_cast<char>(c);
            }
        }
      } else {
        out_.append(s.substr(i, len));
      }
      i += len;
    }
    out_ += '"';
    return Status::Ok();
  }

  Status WriteArray(const rapidjson::Value& v, const std::string& path) {
    out_ += '[';
    for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
      if (i > 0) out_ += ',';
      QRM_RETURN_IF_ERROR(Write(v[i], fmt::format("{}[{}]", path, i)));
    }
    out_ += ']';
    return Status::Ok();
  }

  Status WriteObject(const rapidjson::Value& v, const std::string& path) {
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
          return InvalidArgumentError(fmt::format("{}: duplicate key \"{}\"", path, key));
        }
        out_ += ',';
      }
      const std::string child = fmt::format("{}.{}", path, key);
      QRM_RETURN_IF_ERROR(WriteString(key, child));
      out_ += ':';
      QRM_RETURN_IF_ERROR(Write(members[i]->value, child));
    }
    out_ += '}';
    return Status::Ok();
  }

  std::string out_;
};

}  // namespace

StatusOr<std::string> CanonicalJson(const rapidjson::Value& value) {
  Writer writer;
  QRM_RETURN_IF_ERROR(writer.Write(value, "data"));
  return writer.Take();
}

}  // namespace qrm::checkpoint

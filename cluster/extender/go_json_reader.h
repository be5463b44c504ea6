// Reading JSON into our structs by the rules Go's encoding/json follows when kube-scheduler or
// a Go extender decodes the same bytes into the upstream types, on RapidJSON:
//  * an object key matches a field whatever its case ("pod" and "Pod" are the field Pod),
//    unknown keys are skipped, and a key given twice is applied twice, in order: objects merge
//    into what is there, lists are replaced;
//  * null leaves a string, number or struct field as it is, and empties a list, a map or an
//    optional (Go's pointers); a null list or map element is the element's zero value;
//  * a value of the wrong JSON type is an error (never a silent zero), and so is a number that
//    is not an integer of the field's range ("1.0" is not an int32);
//  * numbers keep their text: a quantity may be written as a JSON number and is parsed from the
//    digits as written, as Quantity.UnmarshalJSON does.
// Errors name the type, the path as written in the document and the value:
//   ExtenderArgs: Pod.spec.containers[1].resources.requests.cpu: "12x" is not a quantity: ...
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "common/quantity.h"
#include "common/status.h"

namespace qrm::extender {

using JsonValue = rapidjson::Value;

// Go's decoder refuses documents nested deeper than this; so do we (and nothing recurses past it).
inline constexpr int kMaxJsonDepth = 10000;

// A parsed document. Not movable: its number values point into its own storage.
class JsonDocument {
 public:
  JsonDocument() = default;
  JsonDocument(const JsonDocument&) = delete;
  JsonDocument& operator=(const JsonDocument&) = delete;

  // RFC 8259 JSON in UTF-8, one value, at most kMaxJsonDepth deep. kInvalidArgument:
  // "invalid JSON at byte 17: Missing a comma or '}' after an object member."
  Status Parse(std::string_view text);

  const JsonValue& root() const { return doc_; }

  // Whether `v` is a number; its text is then v.GetString() (numbers are kept as written).
  bool IsNumber(const JsonValue& v) const;

  // `v` as compact JSON, numbers as written, strings escaped as Go writes them.
  std::string Text(const JsonValue& root) const;

 private:
  rapidjson::Document doc_;
  std::unique_ptr<char[]> numbers_;  // the text of every number, back to back
  size_t numbers_size_ = 0;
};

// Where a value is, rendered only when an error names it. Each step points to its parent, which
// lives in a caller's frame: pass path.Key(k) straight to the call that reads the value, and
// name every step that is kept (a = p.Key("x"); b = a.Key("y")), never a.Key("x").Key("y").
class JsonPath {
 public:
  JsonPath() = default;  // the document itself
  JsonPath Key(std::string_view key) const { return JsonPath(this, key, kNoIndex); }
  JsonPath Index(size_t index) const { return JsonPath(this, {}, index); }

  // Pod.spec.containers[1].resources.requests."nvidia.com/gpu"; "(top)" for the document.
  std::string ToString() const;

 private:
  static constexpr size_t kNoIndex = static_cast<size_t>(-1);
  JsonPath(const JsonPath* parent, std::string_view key, size_t index)
      : parent_(parent), key_(key), index_(index) {}

  const JsonPath* parent_ = nullptr;
  std::string_view key_;
  size_t index_ = kNoIndex;
};

// Whether an object key names the field `name` as Go matches them: ASCII letters in any case,
// and the two non-ASCII letters Unicode folds to ASCII (U+017F for s, U+212A for k).
bool GoKeyMatches(std::string_view key, std::string_view name);

// Reads values of one document for the type `type` (the prefix of every message).
class GoDecoder {
 public:
  GoDecoder(const JsonDocument& doc, std::string_view type) : doc_(doc), type_(type) {}

  // "<type>: <path>: <message>"
  Status Error(const JsonPath& path, std::string_view message) const;
  // "<type>: <path>: expected <expected>, got <what v is>"
  Status TypeError(const JsonPath& path, const JsonValue& v, std::string_view expected) const;
  // How a value is shown in a message: its text for scalars, "an object" or "an array".
  std::string Describe(const JsonValue& v) const;

  bool IsNumber(const JsonValue& v) const { return doc_.IsNumber(v); }
  bool IsString(const JsonValue& v) const { return v.IsString() && !doc_.IsNumber(v); }
  const JsonDocument& document() const { return doc_; }

  Status ReadString(const JsonValue& v, const JsonPath& path, std::string& out) const;
  Status ReadInt64(const JsonValue& v, const JsonPath& path, int64_t& out) const;
  Status ReadInt32(const JsonValue& v, const JsonPath& path, int32_t& out) const;
  Status ReadOptionalInt32(const JsonValue& v, const JsonPath& path,
                           std::optional<int32_t>& out) const;
  // resource.Quantity: a string (spaces around it ignored) or a number; null is zero.
  Status ReadQuantity(const JsonValue& v, const JsonPath& path, Quantity& out) const;

  Status ReadStringList(const JsonValue& v, const JsonPath& path,
                        std::vector<std::string>& out) const;
  Status ReadOptionalStringList(const JsonValue& v, const JsonPath& path,
                                std::optional<std::vector<std::string>>& out) const;
  Status ReadStringMap(const JsonValue& v, const JsonPath& path,
                       std::map<std::string, std::string>& out) const;
  Status ReadQuantityMap(const JsonValue& v, const JsonPath& path,
                         std::map<std::string, Quantity>& out) const;

  // A Go struct: calls read(i, value, path) for every member whose key matches fields[i], in
  // document order; other members are skipped. null reads as nothing.
  template <typename Read>
  Status ReadStruct(const JsonValue& v, const JsonPath& path,
                    std::initializer_list<std::string_view> fields, Read&& read) const {
    if (v.IsNull()) return Status::Ok();
    if (!v.IsObject()) return TypeError(path, v, "an object");
    for (const auto& member : v.GetObject()) {
      const std::string_view key(member.name.GetString(), member.name.GetStringLength());
      size_t i = 0;
      for (const std::string_view field : fields) {
        if (GoKeyMatches(key, field)) {
          QRM_RETURN_IF_ERROR(read(i, member.value, path.Key(key)));
          break;
        }
        ++i;
      }
    }
    return Status::Ok();
  }

  // A Go map[string]T: calls read(key, value, path) for each member in order (null empties
  // `out`, which an object adds to, as Go's decoder adds to a map it finds).
  template <typename T, typename Read>
  Status ReadMap(const JsonValue& v, const JsonPath& path, std::map<std::string, T>& out,
                 Read&& read) const {
    if (v.IsNull()) {
      out.clear();
      return Status::Ok();
    }
    if (!v.IsObject()) return TypeError(path, v, "an object");
    for (const auto& member : v.GetObject()) {
      std::string key(member.name.GetString(), member.name.GetStringLength());
      T value{};
      QRM_RETURN_IF_ERROR(read(value, member.value, path.Key(key)));
      out.insert_or_assign(std::move(key), std::move(value));
    }
    return Status::Ok();
  }

  // A Go slice: null empties it; an array sets its length and each element is read into the
  // element already at its index (Go reuses them), new ones starting from zero.
  template <typename T, typename Read>
  Status ReadList(const JsonValue& v, const JsonPath& path, std::vector<T>& out,
                  Read&& read) const {
    if (v.IsNull()) {
      out.clear();
      return Status::Ok();
    }
    if (!v.IsArray()) return TypeError(path, v, "an array");
    out.resize(v.Size());
    for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
      QRM_RETURN_IF_ERROR(read(out[i], v[i], path.Index(i)));
    }
    return Status::Ok();
  }

 private:
  // The number's text when `v` is an integer within [min, max].
  Status ReadInteger(const JsonValue& v, const JsonPath& path, int64_t min, int64_t max,
                     std::string_view expected, int64_t& out) const;

  const JsonDocument& doc_;
  std::string_view type_;
};

}  // namespace qrm::extender

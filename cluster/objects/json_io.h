// Reading and writing Kubernetes object JSON the way Go's encoding/json does, for the object
// codecs of this module.
//
// Writing: fields in the Go struct's declaration order, map keys sorted, compact, so a
// document equals what json.Marshal of the upstream type gives (golden files compare bytes).
// Reading: unknown fields are ignored and null reads as absent, as in Go; a value of the wrong
// JSON type is an error naming its path ("status.podsMetric[3].podUsage.resources.cpu"), never
// a silent zero. Field names are matched exactly (Kubernetes' decoder is case-sensitive).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "cluster/objects/object_meta.h"
#include "common/quantity.h"
#include "common/status.h"

namespace qrm::cluster::json {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

// A JSON value and where it was found.
struct Field {
  const rapidjson::Value* value = nullptr;
  std::string path;
};

// Parses `text` (the whole document must be one JSON value); `what` names it in errors.
StatusOr<rapidjson::Document> Parse(std::string_view text, std::string_view what);

// An object's member, nullopt when absent or null. Errors when `object` is not an object.
StatusOr<std::optional<Field>> Member(const Field& object, const char* key);
Status RequireObject(const Field& field);
StatusOr<std::string> String(const Field& field);
StatusOr<int64_t> Int(const Field& field);
// A quantity: a JSON string, or a bare number (Quantity.UnmarshalJSON takes both).
StatusOr<Quantity> QuantityOf(const Field& field);
// A quantity that may not be negative (usage, capacity: never read as less than nothing).
StatusOr<Quantity> NonNegativeQuantity(const Field& field);
// metav1.Time (Unix seconds) and metav1.Duration (nanoseconds), as meta_time.h reads them.
StatusOr<int64_t> Time(const Field& field);
StatusOr<int64_t> Duration(const Field& field);
// The members of an object, in document order.
Status ForEachMember(const Field& object,
                     const std::function<Status(std::string_view, const Field&)>& each);
// The items of an array.
Status ForEachItem(const Field& array, const std::function<Status(const Field&)>& each);

// Optional members: left as they are when absent.
Status ReadString(const Field& object, const char* key, std::string* out);
Status ReadStringMap(const Field& object, const char* key, std::map<std::string, std::string>* out);

// Writing. Keys and values are written with their length: a string read from JSON may hold
// a NUL ("\u0000"), which RapidJSON's NUL-terminated overloads would cut off.
void WriteKey(Writer& w, std::string_view key);
void WriteStringValue(Writer& w, std::string_view value);
void WriteString(Writer& w, std::string_view key, std::string_view value);
void WriteStringIfSet(Writer& w, std::string_view key, std::string_view value);  // omitempty
void WriteStringMapIfSet(Writer& w, std::string_view key,
                         const std::map<std::string, std::string>& m);

// metav1.TypeMeta + metav1.ObjectMeta (the fields of object_meta.h; creationTimestamp is
// written as null when unset, as Go writes a zero metav1.Time).
void WriteTypeAndObjectMeta(Writer& w, std::string_view kind, std::string_view api_version,
                            const ObjectMeta& meta);
// Checks kind and apiVersion (when present: a list's items may omit them) and reads metadata.
StatusOr<ObjectMeta> ReadTypeAndObjectMeta(const Field& object, std::string_view kind,
                                           std::string_view api_version);

}  // namespace qrm::cluster::json

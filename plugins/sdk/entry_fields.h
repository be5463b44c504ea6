// EntryWriter and EntryReader: the fields of one ledger entry (pod_ledger.h), without JSON
// plumbing. A plugin's entry type writes itself as named strings, integers and booleans and
// reads itself back; every read error names the field, and the ledger adds the pod and the
// container, so a damaged state file is reported precisely.
//
// Entries are stored as JSON objects in the plugin's checkpoint (docs/checkpoint-format.md),
// which holds no floating-point numbers: keep quantities as integers in small units
// ("request_milli") or as strings.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "common/status.h"

namespace qrm::sdk {

class EntryWriter {
 public:
  EntryWriter();

  void Set(std::string_view key, std::string_view value);
  void Set(std::string_view key, const char* value) { Set(key, std::string_view(value)); }
  void Set(std::string_view key, int64_t value);
  void Set(std::string_view key, int value) { Set(key, static_cast<int64_t>(value)); }
  void Set(std::string_view key, bool value);

  // The object written so far (the ledger takes it).
  const rapidjson::Value& object() const { return doc_; }
  // Its canonical JSON text (how the ledger keeps entries in memory).
  StatusOr<std::string> Text() const;

 private:
  rapidjson::Document doc_;
};

class EntryReader {
 public:
  explicit EntryReader(const rapidjson::Value& object) : object_(object) {}

  // A required field; kDataLoss "field \"<key>\" is missing" or "... is not a string".
  StatusOr<std::string> String(std::string_view key) const;
  StatusOr<int64_t> Int(std::string_view key) const;
  StatusOr<bool> Bool(std::string_view key) const;
  // An optional field: `fallback` when absent, kDataLoss when of another type.
  StatusOr<std::string> StringOr(std::string_view key, std::string_view fallback) const;
  StatusOr<int64_t> IntOr(std::string_view key, int64_t fallback) const;
  StatusOr<bool> BoolOr(std::string_view key, bool fallback) const;

 private:
  const rapidjson::Value* Find(std::string_view key) const;

  const rapidjson::Value& object_;
};

}  // namespace qrm::sdk

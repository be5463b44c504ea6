#include "plugins/sdk/entry_fields.h"

#include <fmt/format.h>

#include "checkpoint/canonical_json.h"

namespace qrm::sdk {
namespace {

rapidjson::Value Key(std::string_view key, rapidjson::Document::AllocatorType& a) {
  return rapidjson::Value(key.data(), static_cast<rapidjson::SizeType>(key.size()), a);
}

Status WrongType(std::string_view key, std::string_view type) {
  return DataLossError(fmt::format("field \"{}\" is not {}", key, type));
}

}  // namespace

EntryWriter::EntryWriter() {
  doc_.SetObject();
}

void EntryWriter::Set(std::string_view key, std::string_view value) {
  auto& a = doc_.GetAllocator();
  doc_.RemoveMember(Key(key, a));
  doc_.AddMember(Key(key, a), Key(value, a), a);
}

void EntryWriter::Set(std::string_view key, int64_t value) {
  auto& a = doc_.GetAllocator();
  doc_.RemoveMember(Key(key, a));
  doc_.AddMember(Key(key, a), rapidjson::Value(value), a);
}

void EntryWriter::Set(std::string_view key, bool value) {
  auto& a = doc_.GetAllocator();
  doc_.RemoveMember(Key(key, a));
  doc_.AddMember(Key(key, a), rapidjson::Value(value), a);
}

StatusOr<std::string> EntryWriter::Text() const {
  return checkpoint::CanonicalJson(doc_);
}

const rapidjson::Value* EntryReader::Find(std::string_view key) const {
  if (!object_.IsObject()) return nullptr;
  const auto it = object_.FindMember(rapidjson::Value(
      rapidjson::StringRef(key.data(), static_cast<rapidjson::SizeType>(key.size()))));
  return it == object_.MemberEnd() ? nullptr : &it->value;
}

StatusOr<std::string> EntryReader::String(std::string_view key) const {
  const rapidjson::Value* v = Find(key);
  if (v == nullptr) return DataLossError(fmt::format("field \"{}\" is missing", key));
  if (!v->IsString()) return WrongType(key, "a string");
  return std::string(v->GetString(), v->GetStringLength());
}

StatusOr<int64_t> EntryReader::Int(std::string_view key) const {
  const rapidjson::Value* v = Find(key);
  if (v == nullptr) return DataLossError(fmt::format("field \"{}\" is missing", key));
  if (!v->IsInt64()) return WrongType(key, "an integer");
  return v->GetInt64();
}

StatusOr<bool> EntryReader::Bool(std::string_view key) const {
  const rapidjson::Value* v = Find(key);
  if (v == nullptr) return DataLossError(fmt::format("field \"{}\" is missing", key));
  if (!v->IsBool()) return WrongType(key, "a boolean");
  return v->GetBool();
}

StatusOr<std::string> EntryReader::StringOr(std::string_view key, std::string_view fallback) const {
  if (Find(key) == nullptr) return std::string(fallback);
  return String(key);
}

StatusOr<int64_t> EntryReader::IntOr(std::string_view key, int64_t fallback) const {
  if (Find(key) == nullptr) return fallback;
  return Int(key);
}

StatusOr<bool> EntryReader::BoolOr(std::string_view key, bool fallback) const {
  if (Find(key) == nullptr) return fallback;
  return Bool(key);
}

}  // namespace qrm::sdk

#include "cri-shim/lenient_decode.h"

#include <map>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/stubs/common.h>
#include <google/protobuf/unknown_field_set.h>

#include "cri-shim/byte_buffer.h"

namespace qrm::shim {
namespace {

namespace pb = google::protobuf;

// CRI messages are not recursive; this only bounds hostile nesting of unknown-typed bytes.
constexpr int kMaxDepth = 64;

std::string Join(const std::string& path, const std::string& name) {
  return path.empty() ? name : path + "." + name;
}

// The first field under `path` whose value a strict parse rejects. Scalars with the wrong
// wire type are not errors (the parser keeps them as unknown fields), so only
// length-delimited values can be: strings that are not UTF-8 and nested messages.
std::optional<std::string> FindInvalid(const pb::Descriptor& type, const std::string& bytes,
                                       const std::string& path, int depth) {
  pb::UnknownFieldSet fields;
  if (depth > kMaxDepth || !fields.ParseFromString(bytes)) {
    return fmt::format("{}malformed protobuf wire format ({} bytes)",
                       path.empty() ? "" : path + ": ", bytes.size());
  }
  std::map<int, int> seen;  // field number -> occurrences so far (repeated indexes)
  for (int i = 0; i < fields.field_count(); ++i) {
    const pb::UnknownField& field = fields.field(i);
    const pb::FieldDescriptor* fd = type.FindFieldByNumber(field.number());
    if (fd == nullptr || field.type() != pb::UnknownField::TYPE_LENGTH_DELIMITED) continue;
    std::string name = Join(path, fd->name());
    if (fd->is_repeated()) name += fmt::format("[{}]", seen[field.number()]++);
    const std::string& value = field.length_delimited();
    if (fd->type() == pb::FieldDescriptor::TYPE_STRING &&
        !pb::internal::IsStructurallyValidUTF8(value.data(), static_cast<int>(value.size()))) {
      return name + ": string is not valid UTF-8";
    }
    if (fd->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
      if (auto bad = FindInvalid(*fd->message_type(), value, name, depth + 1)) return bad;
    }
  }
  return std::nullopt;
}

bool Merge(const std::string& bytes, pb::Message* message, int depth) {
  pb::UnknownFieldSet fields;
  if (depth > kMaxDepth || !fields.ParseFromString(bytes)) return false;
  const pb::Reflection* reflection = message->GetReflection();
  for (int i = 0; i < fields.field_count(); ++i) {
    const pb::UnknownField& field = fields.field(i);
    pb::UnknownFieldSet single;
    single.AddField(field);
    std::string encoded;
    single.SerializeToString(&encoded);
    std::unique_ptr<pb::Message> one(message->New());
    if (one->ParseFromString(encoded)) {
      message->MergeFrom(*one);
      continue;
    }
    const pb::FieldDescriptor* fd = message->GetDescriptor()->FindFieldByNumber(field.number());
    // A map entry that does not parse is dropped: half an entry means nothing.
    if (fd == nullptr || fd->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE || fd->is_map() ||
        field.type() != pb::UnknownField::TYPE_LENGTH_DELIMITED) {
      continue;
    }
    pb::Message* sub = fd->is_repeated() ? reflection->AddMessage(message, fd)
                                         : reflection->MutableMessage(message, fd);
    Merge(field.length_delimited(), sub, depth + 1);
  }
  return true;
}

}  // namespace

std::string DecodeError(const pb::Descriptor& type, const grpc::ByteBuffer& buffer) {
  if (!buffer.Valid()) return "no request message";
  auto bad = FindInvalid(type, ByteBufferToString(buffer), "", 0);
  return bad ? *bad : fmt::format("does not parse as {}", type.full_name());
}

bool LenientParse(const grpc::ByteBuffer& buffer, pb::Message* message) {
  return buffer.Valid() && Merge(ByteBufferToString(buffer), message, 0);
}

}  // namespace qrm::shim

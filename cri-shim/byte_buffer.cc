#include "cri-shim/byte_buffer.h"

#include <vector>

#include <grpcpp/impl/codegen/proto_utils.h>

namespace qrm::shim {

using Traits = grpc::SerializationTraits<google::protobuf::MessageLite>;

bool ParseByteBuffer(const grpc::ByteBuffer& buffer, google::protobuf::MessageLite* message) {
  // Deserialize consumes its buffer; the copy shares the slices (a reference count, no bytes).
  grpc::ByteBuffer copy(buffer);
  return Traits::Deserialize(&copy, message).ok();
}

grpc::ByteBuffer SerializeToByteBuffer(const google::protobuf::MessageLite& message) {
  grpc::ByteBuffer buffer;
  bool own_buffer = false;
  // Fails only for messages over 2 GiB, which no CRI limit lets through.
  (void)Traits::Serialize(message, &buffer, &own_buffer);
  return buffer;
}

std::string ByteBufferToString(const grpc::ByteBuffer& buffer) {
  std::string out;
  std::vector<grpc::Slice> slices;
  if (!buffer.Valid() || !buffer.Dump(&slices).ok()) return out;
  for (const grpc::Slice& slice : slices) {
    out.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  return out;
}

}  // namespace qrm::shim

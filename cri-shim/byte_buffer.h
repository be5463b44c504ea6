// Conversions between gRPC's ByteBuffer (what the generic proxy carries) and protobuf
// messages, for the few calls the shim decodes.
#pragma once

#include <string>

#include <google/protobuf/message_lite.h>
#include <grpcpp/support/byte_buffer.h>

namespace qrm::shim {

// Parses `buffer` (left unchanged) into `message`; false if it is not a valid encoding.
// Unknown fields are kept in `message`, so re-serializing it loses nothing.
bool ParseByteBuffer(const grpc::ByteBuffer& buffer, google::protobuf::MessageLite* message);

grpc::ByteBuffer SerializeToByteBuffer(const google::protobuf::MessageLite& message);

// The bytes of `buffer` (empty for an invalid buffer).
std::string ByteBufferToString(const grpc::ByteBuffer& buffer);

}  // namespace qrm::shim

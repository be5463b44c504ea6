// What the shim can still learn from a request that does not decode.
//
// An intercepted request that fails to parse is refused (docs/cri-shim.md, "Intercepted
// calls"); these helpers name the reason and recover what can be recovered for the log line
// and the skip rules (the pod's identity, its namespace and annotations).
#pragma once

#include <string>

#include <google/protobuf/message.h>
#include <grpcpp/support/byte_buffer.h>

namespace qrm::shim {

// Why `buffer` does not parse as `type`: the first field (as a path such as
// "config.envs[0].value") whose value is invalid, or "malformed protobuf wire format" with the
// byte count. Never empty.
std::string DecodeError(const google::protobuf::Descriptor& type, const grpc::ByteBuffer& buffer);

// Merges into `message` every field of `buffer` that parses on its own, descending into
// message fields that do not: what a strict parse would have given, minus the invalid parts.
// Returns false if not even the wire format is readable (then `message` is unchanged).
bool LenientParse(const grpc::ByteBuffer& buffer, google::protobuf::Message* message);

}  // namespace qrm::shim

// Conversions between qrm::Status and grpc::Status. Codes share numbering, so
// the conversion is exact in both directions.
#pragma once

#include <grpcpp/support/status.h>

#include "common/status.h"

namespace qrm {

inline grpc::Status ToGrpcStatus(const Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), s.message());
}

inline Status FromGrpcStatus(const grpc::Status& s) {
  if (s.ok()) return Status::Ok();
  return Status(static_cast<StatusCode>(s.error_code()), s.error_message());
}

}  // namespace qrm

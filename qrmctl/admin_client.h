// AdminClient: qrmctl's side of qrm-host's admin socket.
#pragma once

#include <memory>
#include <string>

#include "api/admin_v1.grpc.pb.h"
#include "common/status.h"

namespace qrm::ctl {

class AdminClient {
 public:
  explicit AdminClient(std::string socket);

  StatusOr<::qrm::admin::v1::ListPluginsResponse> ListPlugins();
  StatusOr<::qrm::admin::v1::ListAllocationsResponse> ListAllocations(const std::string& pod);
  StatusOr<::qrm::admin::v1::GetAllocatableResponse> GetAllocatable();

 private:
  // Turns a failed call into an error that says what to do.
  Status Explain(const grpc::Status& s) const;

  std::string socket_;
  std::unique_ptr<::qrm::admin::v1::Admin::Stub> stub_;
};

}  // namespace qrm::ctl

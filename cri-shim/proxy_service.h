// The services the shim's server registers. Every call, of any method, lands in one of them:
//  * UnaryService: a raw (ByteBuffer) callback handler for each unary method our .proto
//    declares, each call served by a UnaryCall;
//  * ProxyService: the generic service gRPC falls back to for everything else (streaming
//    methods, methods our .proto does not know), each call served by a StreamCall.
#pragma once

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/impl/service_type.h>

#include "cri-shim/proxy_deps.h"

namespace qrm::shim {

class UnaryService final : public grpc::Service {
 public:
  explicit UnaryService(ProxyDeps& deps);
};

class ProxyService final : public grpc::CallbackGenericService {
 public:
  explicit ProxyService(ProxyDeps& deps) : deps_(deps) {}

  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext* context) override;

 private:
  ProxyDeps& deps_;
};

}  // namespace qrm::shim

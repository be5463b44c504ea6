#include "cri-shim/proxy_service.h"

#include <grpcpp/impl/codegen/server_callback_handlers.h>
#include <grpcpp/impl/rpc_service_method.h>

#include "cri-shim/stream_call.h"
#include "cri-shim/unary_call.h"

namespace qrm::shim {

UnaryService::UnaryService(ProxyDeps& deps) {
  int index = 0;
  for (const std::string& name : deps.methods.Names()) {
    const MethodInfo* method = deps.methods.Find(name);
    if (!method->unary) continue;
    // The name is the full path ("/runtime.v1.RuntimeService/Version"), kept alive by the
    // method table, as generated services keep theirs in static arrays.
    AddMethod(new grpc::internal::RpcServiceMethod(method->full_name.c_str(),
                                                   grpc::internal::RpcMethod::NORMAL_RPC, nullptr));
    // The method's counters are found here, once, rather than by name on every call.
    MethodCounters* counters = &deps.counters.Method(method->full_name);
    MarkMethodRawCallback(
        index++,
        new grpc::internal::CallbackUnaryHandler<grpc::ByteBuffer, grpc::ByteBuffer>(
            [&deps, method, counters](grpc::CallbackServerContext* context,
                                      const grpc::ByteBuffer* request, grpc::ByteBuffer* response) {
              return new UnaryCall(context, *method, *counters, deps, request, response);
            }));
  }
}

grpc::ServerGenericBidiReactor* ProxyService::CreateReactor(
    grpc::GenericCallbackServerContext* context) {
  const MethodInfo* method = deps_.methods.Find(context->method());
  const bool image =
      method != nullptr ? method->image_service : MethodTable::IsImageService(context->method());
  return new StreamCall(context, deps_.channels.generic(image),
                        deps_.counters.Method(context->method()), deps_.counters);
}

}  // namespace qrm::shim

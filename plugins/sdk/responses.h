// What every plugin's answers to a ResourceRequest share: the request's identity echoed back,
// and the PodRef its log lines name the container by.
#pragma once

#include <string>

#include "api/resourceplugin_v1alpha1.pb.h"
#include "common/log.h"

namespace qrm::sdk {

// Copies the container's identity from `req` into `resp` (a ResourceHintsResponse or a
// ResourceAllocationResponse) with `resource` as its resource_name. The host does not need it
// back, but echoing it makes logs and captures readable, as the kubewharf plugins do.
template <typename Response>
void EchoIdentity(const ::resourceplugin::v1alpha1::ResourceRequest& req,
                  const std::string& resource, Response* resp) {
  resp->set_pod_uid(req.pod_uid());
  resp->set_pod_namespace(req.pod_namespace());
  resp->set_pod_name(req.pod_name());
  resp->set_container_name(req.container_name());
  resp->set_container_type(req.container_type());
  resp->set_container_index(req.container_index());
  resp->set_pod_role(req.pod_role());
  resp->set_pod_type(req.pod_type());
  resp->set_resource_name(resource);
  resp->set_native_qos_class(req.native_qos_class());
}

// The container `req` is about, for log lines ("pod=default/web(uid) container=app").
inline PodRef RefOf(const ::resourceplugin::v1alpha1::ResourceRequest& req) {
  return {req.pod_uid(), req.pod_namespace(), req.pod_name(), req.container_name()};
}

}  // namespace qrm::sdk

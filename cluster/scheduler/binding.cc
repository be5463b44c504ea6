#include "cluster/scheduler/binding.h"

#include <fmt/format.h>

#include "cluster/extender/go_json_writer.h"

namespace qrm::cluster::scheduler {

BindPlan MakeBindPlan(const extender::ExtenderBindingArgs& args) {
  extender::GoJsonWriter w;
  w.BeginObject();
  w.Key("kind");
  w.String("Binding");
  w.Key("apiVersion");
  w.String("v1");
  w.Key("metadata");
  w.BeginObject();
  w.Key("name");
  w.String(args.pod_name);
  w.Key("namespace");
  w.String(args.pod_namespace);
  if (!args.pod_uid.empty()) {
    w.Key("uid");
    w.String(args.pod_uid);
  }
  w.EndObject();
  w.Key("target");
  w.BeginObject();
  w.Key("kind");
  w.String("Node");
  w.Key("name");
  w.String(args.node);
  w.EndObject();
  w.EndObject();
  BindPlan plan;
  plan.path =
      fmt::format("/api/v1/namespaces/{}/pods/{}/binding", args.pod_namespace, args.pod_name);
  plan.body = w.Take();
  return plan;
}

}  // namespace qrm::cluster::scheduler

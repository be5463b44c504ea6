#include "cluster/scheduler/extender_routes.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace qrm::cluster::scheduler {
namespace {

http::Route Post(std::function<http::Response(const http::Request&)> handler) {
  return http::Route{{"POST"}, std::move(handler)};
}

http::Route Get(http::Handler handler) {
  return http::Route{{"GET"},
                     [handler = std::move(handler)](const http::Request&) { return handler(); }};
}

}  // namespace

Status PostBinding(const kube::KubeClient& client, const BindPlan& plan) {
  QRM_ASSIGN_OR_RETURN(kube::KubeResponse answer, client.Request("POST", plan.path, plan.body));
  return kube::ApiError("POST", client.UrlOf(plan.path), answer);
}

std::string InformersJson(const std::vector<InformerState>& states) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartArray();
  for (const InformerState& s : states) {
    w.StartObject();
    w.Key("resource");
    w.String(s.resource.c_str());
    w.Key("synced");
    w.Bool(s.counters.synced);
    w.Key("resourceVersion");
    w.String(s.counters.resource_version.c_str());
    w.Key("lists");
    w.Uint64(s.counters.lists);
    w.Key("watches");
    w.Uint64(s.counters.watches);
    w.Key("expired");
    w.Uint64(s.counters.expired);
    w.Key("events");
    w.Uint64(s.counters.events);
    w.Key("errors");
    w.Uint64(s.counters.errors);
    w.Key("undecodable");
    w.Uint64(s.undecodable);
    w.Key("lastError");
    w.String(s.counters.last_error.c_str());
    w.EndObject();
  }
  w.EndArray();
  return std::string(buffer.GetString()) + "\n";
}

std::map<std::string, http::Route> ExtenderRoutes(ExtenderService& service,
                                                  const kube::KubeClient& client,
                                                  const ExtenderInformers& informers,
                                                  std::function<bool()> ready) {
  std::map<std::string, http::Route> routes;
  for (auto& [path, handler] : http::StandardRoutes(std::move(ready))) {
    routes[path] = Get(std::move(handler));
  }
  routes[kFilterPath] =
      Post([&service](const http::Request& r) { return service.HandleFilter(r.body); });
  routes[kPrioritizePath] =
      Post([&service](const http::Request& r) { return service.HandlePrioritize(r.body); });
  routes[kBindPath] = Post([&service, &client](const http::Request& r) {
    return service.HandleBind(
        r.body, [&client](const BindPlan& plan) { return PostBinding(client, plan); });
  });
  routes["/debug/informers"] = Get([&informers] {
    return http::Response{200, "application/json", InformersJson(informers.State())};
  });
  return routes;
}

}  // namespace qrm::cluster::scheduler

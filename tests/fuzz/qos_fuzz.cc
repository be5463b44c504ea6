// Fuzzes the one QoS resolver (qos/) that qrm-host and the CPU, memory and NIC plugins share:
// the operator's role table and a pod's labels and annotations.
//
// Input, one item per line:
//   line 1   the role table JSON (RoleTable::Parse; one line of JSON)
//   line 2   the ResourceRequest's pod_role ("" = take it from the annotation)
//   line 3+  annotations as key=value (value up to the end of the line; may contain '='); a
//            line starting with '@' is a pod label (@key=value)
// Properties checked beyond "does not crash":
//  * every error is kInvalidArgument;
//  * an accepted table only holds valid roles (NUMA binding only on dedicated/shared, every
//    anti-affinity entry names a role of the table or "*") and AntiAffine is symmetric;
//  * a resolved requirement is consistent with the table and the level rules, and the
//    ResourceRequest overload resolves exactly as the map overload does with the request's
//    pod_role or, without one, with the role PodRoleOf finds in the labels and annotations;
//  * the host's overload (labels, annotations) resolves exactly as a plugin does from the
//    request the host builds (pod_role = PodRoleOf) and from one without pod_role;
//  * a requirement that is not `annotated` is the shared_cores default without a role.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "api/resourceplugin_v1alpha1.pb.h"
#include "qos/qos_requirement.h"

namespace {

using qrm::qos::QosLevel;
using qrm::qos::QosRequirement;
using qrm::qos::RoleTable;

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "qos_fuzz: %s\n", what);
  std::abort();
}

void Check(bool ok, const char* what) {
  if (!ok) Fail(what);
}

bool MayBindNuma(QosLevel level) {
  return level == QosLevel::kDedicated || level == QosLevel::kShared;
}

void CheckTable(const RoleTable& table) {
  std::vector<std::string> names{""};  // pods without a role take part in AntiAffine too
  for (const auto& [name, spec] : table.roles()) {
    Check(!name.empty() && name != "*", "role table accepted an invalid role name");
    Check(spec.name == name, "RoleSpec.name differs from its key");
    Check(table.Find(name) == &spec, "Find does not return the role");
    Check(!(spec.numa_binding || spec.numa_exclusive) || MayBindNuma(spec.level),
          "role table accepted NUMA binding on a level that cannot bind");
    for (const std::string& other : spec.numa_anti_affinity) {
      Check(other == "*" || table.Find(other) != nullptr, "anti-affinity names an unknown role");
    }
    names.push_back(name);
  }
  names.push_back("not-a-role-of-the-table");
  for (const std::string& a : names) {
    for (const std::string& b : names) {
      Check(table.AntiAffine(a, b) == table.AntiAffine(b, a), "AntiAffine is not symmetric");
      if (a.empty() || b.empty())
        Check(!table.AntiAffine(a, b), "a pod without role is anti-affine");
    }
  }
}

void CheckResolved(const qrm::StatusOr<QosRequirement>& req, const RoleTable& table) {
  if (!req.ok()) {
    Check(req.status().code() == qrm::StatusCode::kInvalidArgument, "ResolveQos error code");
    return;
  }
  Check(!req->numa_bound() || MayBindNuma(req->level), "NUMA-bound requirement on wrong level");
  Check(req->annotated || (req->level == QosLevel::kShared && req->role.empty()),
        "an unannotated requirement is not the shared_cores default");
  if (!req->role.empty()) {
    const qrm::qos::RoleSpec* spec = table.Find(req->role);
    Check(spec != nullptr, "resolved a role that is not in the table");
    Check(spec->level == req->level && spec->numa_binding == req->numa_binding &&
              spec->numa_exclusive == req->numa_exclusive,
          "resolved requirement differs from its role");
  }
}

bool Same(const qrm::StatusOr<QosRequirement>& a, const qrm::StatusOr<QosRequirement>& b) {
  if (a.ok() != b.ok()) return false;
  if (!a.ok()) return a.status().code() == b.status().code();
  return a->level == b->level && a->numa_binding == b->numa_binding &&
         a->numa_exclusive == b->numa_exclusive && a->role == b->role &&
         a->annotated == b->annotated;
}

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<std::string_view> lines =
      Lines(std::string_view(reinterpret_cast<const char*>(data), size));

  qrm::StatusOr<RoleTable> parsed = RoleTable::Parse(lines[0]);
  RoleTable table;  // an invalid table still leaves the annotations worth resolving
  if (parsed.ok()) {
    table = std::move(*parsed);
    CheckTable(table);
  } else {
    Check(parsed.status().code() == qrm::StatusCode::kInvalidArgument, "RoleTable error code");
  }

  const std::string pod_role(lines.size() > 1 ? lines[1] : std::string_view());
  std::map<std::string, std::string> annotations, labels;
  resourceplugin::v1alpha1::ResourceRequest request;
  request.set_pod_role(pod_role);
  for (size_t i = 2; i < lines.size(); ++i) {
    const bool label = !lines[i].empty() && lines[i][0] == '@';
    const std::string_view line = label ? lines[i].substr(1) : lines[i];
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    std::string key(line.substr(0, eq));
    std::string value(line.substr(eq + 1));
    // The last one wins, as in a protobuf map.
    (label ? labels : annotations)[key] = value;
    (*(label ? request.mutable_labels() : request.mutable_annotations()))[key] = value;
  }

  // A request without pod_role takes the role from the pod's labels, then its annotations.
  const std::string effective_role =
      pod_role.empty() ? qrm::qos::PodRoleOf(labels, annotations) : pod_role;
  const qrm::StatusOr<QosRequirement> from_map =
      qrm::qos::ResolveQos(annotations, effective_role, table);
  CheckResolved(from_map, table);
  Check(Same(from_map, qrm::qos::ResolveQos(request, table)),
        "ResourceRequest and map overloads disagree");

  // What the host resolves is what a plugin resolves from the request the host sends.
  const qrm::StatusOr<QosRequirement> host = qrm::qos::ResolveQos(labels, annotations, table);
  CheckResolved(host, table);
  resourceplugin::v1alpha1::ResourceRequest sent = request;
  sent.set_pod_role(qrm::qos::PodRoleOf(labels, annotations));
  Check(Same(host, qrm::qos::ResolveQos(sent, table)), "host and plugin resolve differently");
  sent.clear_pod_role();
  Check(Same(host, qrm::qos::ResolveQos(sent, table)),
        "a request without pod_role resolves differently from the host");
  return 0;
}

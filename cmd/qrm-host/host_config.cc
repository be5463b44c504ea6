#include "cmd/qrm-host/host_config.h"

#include <charconv>

#include <fmt/format.h>

#include "common/config/config.h"
#include "common/grpc/peer_checked_listener.h"
#include "common/log.h"
#include "common/quote.h"
#include "common/unix_socket.h"
#include "qrm/topology/policy_names.h"

namespace qrm::host {
namespace po = boost::program_options;
namespace {

// "key=value" -> {key, value}; errors name the flag.
StatusOr<std::pair<std::string, std::string>> SplitPair(const std::string& text,
                                                        const std::string& flag,
                                                        const std::string& form) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    return InvalidArgumentError(
        fmt::format("{}: invalid value {} (expected {})", flag, Quote(text), form));
  }
  return std::make_pair(text.substr(0, eq), text.substr(eq + 1));
}

StatusOr<mode_t> ParseMode(const std::string& text, const std::string& flag) {
  unsigned mode = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), mode, 8);
  if (ec != std::errc() || end != text.data() + text.size() || mode > 0777 || text.empty()) {
    return InvalidArgumentError(
        fmt::format("{}: invalid mode {} (expected octal, e.g. 0660)", flag, Quote(text)));
  }
  return static_cast<mode_t>(mode);
}

// "TO[:SCALE]" of --resource-alias FROM=TO[:SCALE]; `flag_value` is the whole value, for errors.
StatusOr<admission::ResourceAlias> ParseAliasTarget(const std::string& target,
                                                    const std::string& flag_value) {
  admission::ResourceAlias alias;
  alias.to = target;
  if (size_t colon = target.rfind(':'); colon != std::string::npos) {
    alias.to = target.substr(0, colon);
    const std::string scale = target.substr(colon + 1);
    auto [end, ec] = std::from_chars(scale.data(), scale.data() + scale.size(), alias.scale);
    if (ec != std::errc() || end != scale.data() + scale.size() || !(alias.scale > 0) ||
        alias.to.empty()) {
      return InvalidArgumentError(
          fmt::format("resource_alias: invalid value {} (expected FROM=TO[:SCALE], SCALE > 0)",
                      Quote(flag_value)));
    }
  }
  return alias;
}

}  // namespace

HostFlags::HostFlags() {
  values_ = defaults_;
  // In this order in --help (docs/configuration.md shows it).
  AddCriFlags();
  AddAdmissionFlags();
  AddPodResourcesFlags();
  AddOperationFlags();
}

// The CRI socket the kubelet uses and the runtime behind it.
void HostFlags::AddCriFlags() {
  auto add = desc_.add_options();
  add("cri-socket", po::value(&values_.shim.cri_socket)->default_value(values_.shim.cri_socket),
      "socket the kubelet talks CRI to (path or unix:// URL)");
  add("runtime-endpoint",
      po::value(&values_.shim.runtime_endpoint)->default_value(values_.shim.runtime_endpoint),
      "the container runtime's CRI endpoint");
  add("image-endpoint", po::value(&values_.shim.image_endpoint),
      "image service endpoint (default: the runtime endpoint)");
  add("cri-socket-mode", po::value(&socket_mode_),
      "CRI socket mode, octal (default: the runtime socket's)");
  add("cri-socket-group", po::value(&socket_group_),
      "CRI socket group name or id (default: the runtime socket's)");
  add("max-message-size", po::value(&max_message_size_)->default_value(max_message_size_),
      "CRI message size limit, both directions");
  add("skip-namespaces", po::value(&skip_namespaces_)->multitoken()->composing(),
      "namespaces whose pods pass through untouched");
  add("runtime-timeout", po::value(&runtime_timeout_)->default_value(runtime_timeout_),
      "deadline of the host's own runtime calls and of waiting for the runtime at start");
}

// Plugins, the topology policy and admission.
void HostFlags::AddAdmissionFlags() {
  auto add = desc_.add_options();
  add("plugin-dir",
      po::value(&values_.host.registry.plugin_dir)->default_value(values_.host.registry.plugin_dir),
      "directory of plugin sockets and the registration socket");
  add("state-dir", po::value(&values_.host.state_dir)->default_value(values_.host.state_dir),
      "host checkpoint directory");
  add("reconcile-period", po::value(&reconcile_period_)->default_value(reconcile_period_),
      "how often allocations are pulled from plugins and applied (e.g. 3s)");
  add("topology-policy", po::value(&policy_)->default_value(policy_),
      "none | best-effort | restricted | single-numa-node");
  add("topology-scope", po::value(&scope_)->default_value(scope_), "container | pod");
  add("topology-policy-option", po::value(&policy_options_)->multitoken()->composing(),
      "policy option key=value (prefer-closest-numa-nodes=true)");
  add("plugin-rpc-timeout", po::value(&rpc_timeout_)->default_value(rpc_timeout_),
      "deadline of each plugin call during admission");
  add("failure-policy", po::value(&failure_policies_)->multitoken()->composing(),
      "per QoS level: LEVEL=fail|ignore, LEVEL a qos_level or \"unannotated\" (pods with no "
      "qos_level annotation and no role); default shared_cores=ignore, unannotated=ignore, "
      "others fail");
  add("roles", po::value(&roles_json_),
      "role table JSON, the plugins' format (docs/annotations.md): pod roles resolve to levels "
      "for the failure policy exactly as in the plugins");
  add("roles-file", po::value(&roles_file_),
      "file holding the role table JSON (point the host and the plugins at the same file)");
  add("accompanying-resource", po::value(&accompanying_)->multitoken()->composing(),
      "RES=OWNER: requests for RES are placed by OWNER's plugin and sent only to it (default "
      "qrm.io/nic-bandwidth=qrm.io/nic)");
  add("always-consult", po::value(&always_consult_)->multitoken()->composing(),
      "resources whose plugin is asked for every container (e.g. qrm.io/nic)");
  add("resource-alias", po::value(&aliases_)->multitoken()->composing(),
      "FROM=TO[:SCALE]: requests for FROM are served by TO's plugin, scaled");
  add("worker-threads",
      po::value(&values_.host.worker_threads)->default_value(values_.host.worker_threads),
      "threads for plugin calls and durable writes");
  add("sysfs-root", po::value(&values_.host.sysfs_root)->default_value(values_.host.sysfs_root),
      "sysfs to read the NUMA layout and online CPUs from (a fake machine in tests and demos)");
}

void HostFlags::AddPodResourcesFlags() {
  auto add = desc_.add_options();
  add("pod-resources-socket",
      po::value(&values_.pod_resources.socket)->default_value(values_.pod_resources.socket),
      "podresources v1 socket");
  add("pod-resources-qps",
      po::value(&values_.pod_resources.qps)->default_value(values_.pod_resources.qps),
      "pod-resources rate limit, requests/s (0: unlimited)");
  add("pod-resources-burst",
      po::value(&values_.pod_resources.burst)->default_value(values_.pod_resources.burst),
      "pod-resources burst");
  add("pod-resources-device-resource", po::value(&device_resources_)->multitoken()->composing(),
      "resources reported as devices (default qrm.io/nic)");
}

// The admin socket, who may connect to qrm's sockets, /metrics and logging.
void HostFlags::AddOperationFlags() {
  auto add = desc_.add_options();
  add("admin-socket", po::value(&values_.admin.socket)->default_value(values_.admin.socket),
      "qrmctl's admin socket");
  add("admin-allowed-uids", po::value(&admin_allowed_uids_),
      "users (names or ids) allowed on the admin socket (default: --socket-allowed-uids)");
  // Sockets and peers.
  add("socket-allowed-uids", po::value(&socket_allowed_uids_)->default_value(socket_allowed_uids_),
      "users (names or ids) allowed on the registration and admin sockets (SO_PEERCRED)");
  add("socket-allowed-gids", po::value(&socket_allowed_gids_),
      "groups (names or ids) whose members by primary gid are allowed there too");
  add("socket-group", po::value(&qrm_socket_group_),
      "group of qrm's sockets: registration, admin, pod-resources become 0660 in 0750 "
      "directories (default: 0600 in 0700)");
  add("plugin-max-message-size",
      po::value(&plugin_max_message_size_)->default_value(plugin_max_message_size_),
      "largest message accepted from a plugin or a registering client");
  add("max-connections-per-peer",
      po::value(&max_connections_per_peer_)->default_value(max_connections_per_peer_),
      "connections one client may hold at once: per uid on the CRI, registration and admin "
      "sockets; more are closed at once (0: unlimited)");
  add("metrics-max-connections-per-address",
      po::value(&values_.http_limits.max_per_address)
          ->default_value(values_.http_limits.max_per_address),
      "connections one IP address may hold on the metrics port at once");
  add("metrics-address",
      po::value(&values_.metrics_address)->default_value(values_.metrics_address),
      "HOST:PORT for /metrics, /healthz, /readyz (loopback); empty disables");
  add("log-level", po::value(&values_.log_level)->default_value(values_.log_level),
      "trace | debug | info | warn | error");
  add("log-format", po::value(&values_.log_format)->default_value(values_.log_format),
      "text | json");
}

// Allowlists, socket modes and message limits of the registration, admin and pod-resources
// sockets (the CRI socket follows the runtime's socket instead: cri_socket_mode/group).
Status HostFlags::FinishSockets(HostConfig& c) const {
  auto uids = ParseUidList(socket_allowed_uids_, "socket_allowed_uids");
  if (!uids.ok()) return uids.status();
  QRM_ASSIGN_OR_RETURN(auto gids, ParseGidList(socket_allowed_gids_, "socket_allowed_gids"));
  std::optional<gid_t> group;
  if (!qrm_socket_group_.empty()) {
    QRM_ASSIGN_OR_RETURN(auto gid, ResolveGroup(qrm_socket_group_, "socket_group"));
    group = gid;
  }
  const SocketPermissions perms = SocketPermissionsFor(group);
  if (max_connections_per_peer_ < 0) {
    return InvalidArgumentError(fmt::format(
        "max_connections_per_peer: invalid value {} (0 or more)", max_connections_per_peer_));
  }
  if (c.http_limits.max_per_address < 1) {
    return InvalidArgumentError(
        fmt::format("metrics_max_connections_per_address: invalid value {} (1 or more)",
                    c.http_limits.max_per_address));
  }
  const PeerAllowlist allow{*uids, gids, false, max_connections_per_peer_};
  c.shim.max_connections_per_peer = max_connections_per_peer_;
  c.host.registry.allow = allow;
  c.host.registry.socket_permissions = perms;
  c.admin.allow = allow;
  c.admin.permissions = perms;
  c.pod_resources.permissions = perms;
  if (!admin_allowed_uids_.empty()) {
    QRM_ASSIGN_OR_RETURN(auto admin_uids, ParseUidList(admin_allowed_uids_, "admin_allowed_uids"));
    c.admin.allow.uids = admin_uids;
  }
  QRM_ASSIGN_OR_RETURN(auto max_message,
                       config::ParseBytes(plugin_max_message_size_, "plugin_max_message_size"));
  if (max_message < 4096 || max_message > (1ULL << 30)) {
    return InvalidArgumentError(
        fmt::format("plugin_max_message_size: {} is out of range (4Ki to 1Gi)",
                    Quote(plugin_max_message_size_)));
  }
  c.host.registry.max_message_bytes = static_cast<int>(max_message);
  // Plugin answers may name only the CPUs and NUMA nodes of the machine the host runs on.
  c.host.registry.machine_sysfs_root = c.host.sysfs_root;
  return Status::Ok();
}

// Failure policies, the role table and accompanying resources.
Status HostFlags::FinishQos(HostConfig& c) const {
  for (const std::string& f : failure_policies_) {
    QRM_ASSIGN_OR_RETURN(auto kv, SplitPair(f, "failure_policy", "LEVEL=fail|ignore"));
    auto p = admission::ParseFailurePolicy(kv.second);
    if (!p.ok()) return p.status().WithContext("failure_policy");
    QRM_RETURN_IF_ERROR(c.host.admission.failure_policies.Set(kv.first, *p));
  }
  auto roles = qos::LoadRoleTable(roles_json_, roles_file_);
  if (!roles.ok()) return roles.status();
  c.host.admission.roles = std::move(*roles);
  if (!accompanying_.empty()) c.host.registry.accompanying_resources.clear();
  for (const std::string& a : accompanying_) {
    auto kv = SplitPair(a, "accompanying_resource", "RES=OWNER");
    if (!kv.ok()) return kv.status();
    c.host.registry.accompanying_resources[kv->first] = kv->second;
  }
  return Status::Ok();
}

// Durations: the reconcile period and the plugin and runtime deadlines.
Status HostFlags::FinishDurations(HostConfig& c) const {
  QRM_ASSIGN_OR_RETURN(auto period, config::ParseDuration(reconcile_period_, "reconcile_period"));
  if (period.count() < 10) {
    return InvalidArgumentError(
        fmt::format("reconcile_period: {} is too short (at least 10ms)", Quote(reconcile_period_)));
  }
  c.host.reconcile_period = period;
  QRM_ASSIGN_OR_RETURN(auto rpc, config::ParseDuration(rpc_timeout_, "plugin_rpc_timeout"));
  c.host.admission.rpc_timeout = rpc;
  QRM_ASSIGN_OR_RETURN(auto runtime, config::ParseDuration(runtime_timeout_, "runtime_timeout"));
  c.shim.runtime_timeout = runtime;
  return Status::Ok();
}

// The topology manager's policy, scope and policy options.
Status HostFlags::FinishTopology(HostConfig& c) const {
  auto policy = topology::ParsePolicy(policy_);
  if (!policy.ok()) return policy.status().WithContext("topology_policy");
  c.host.admission.policy = *policy;
  auto scope = topology::ParseScope(scope_);
  if (!scope.ok()) return scope.status().WithContext("topology_scope");
  c.host.admission.scope = *scope;
  std::map<std::string, std::string> popts;
  for (const std::string& o : policy_options_) {
    auto kv = SplitPair(o, "topology_policy_option", "KEY=VALUE");
    if (!kv.ok()) return kv.status();
    popts[kv->first] = kv->second;
  }
  auto parsed_popts = topology::ParsePolicyOptions(popts);
  if (!parsed_popts.ok()) return parsed_popts.status().WithContext("topology_policy_option");
  c.host.admission.policy_options = *parsed_popts;
  return Status::Ok();
}

// Which plugins admission asks: always-consulted resources, aliases, worker threads.
Status HostFlags::FinishAdmission(HostConfig& c) const {
  c.host.admission.always_consult.insert(always_consult_.begin(), always_consult_.end());
  for (const std::string& a : aliases_) {
    auto kv = SplitPair(a, "resource_alias", "FROM=TO[:SCALE]");
    if (!kv.ok()) return kv.status();
    QRM_ASSIGN_OR_RETURN(auto alias, ParseAliasTarget(kv->second, a));
    c.host.admission.resource_aliases[kv->first] = alias;
  }
  if (c.host.worker_threads == 0 || c.host.worker_threads > 1024) {
    return InvalidArgumentError(
        fmt::format("worker_threads: invalid value {} (1 to 1024)", c.host.worker_threads));
  }
  return Status::Ok();
}

// The CRI socket: message limit, namespaces passed through, mode and group.
Status HostFlags::FinishShim(HostConfig& c) const {
  QRM_ASSIGN_OR_RETURN(auto max_message, config::ParseBytes(max_message_size_, "max_message_size"));
  if (max_message < 4096 || max_message > (1ULL << 30)) {
    return InvalidArgumentError(
        fmt::format("max_message_size: {} is out of range (4Ki to 1Gi)", Quote(max_message_size_)));
  }
  c.shim.max_message_bytes = static_cast<int>(max_message);
  c.shim.skip_namespaces.insert(skip_namespaces_.begin(), skip_namespaces_.end());
  if (!socket_mode_.empty()) {
    QRM_ASSIGN_OR_RETURN(auto mode, ParseMode(socket_mode_, "cri_socket_mode"));
    c.shim.socket_mode = mode;
  }
  if (!socket_group_.empty()) c.shim.socket_group = socket_group_;
  return Status::Ok();
}

Status HostFlags::FinishPodResources(HostConfig& c) const {
  if (!device_resources_.empty()) {
    c.pod_resources.mapping.device_resources = {device_resources_.begin(), device_resources_.end()};
  }
  if (c.pod_resources.qps < 0 || c.pod_resources.burst < 1) {
    return InvalidArgumentError(
        fmt::format("pod_resources_qps/pod_resources_burst: invalid values {} / {} (qps >= 0, "
                    "burst >= 1)",
                    c.pod_resources.qps, c.pod_resources.burst));
  }
  return Status::Ok();
}

// In the order the checks ran before they were split: with several bad values, the same one
// is reported.
StatusOr<HostConfig> HostFlags::Finish() const {
  HostConfig c = values_;
  QRM_RETURN_IF_ERROR(FinishDurations(c));
  QRM_RETURN_IF_ERROR(FinishTopology(c));
  QRM_RETURN_IF_ERROR(FinishQos(c));
  QRM_RETURN_IF_ERROR(FinishAdmission(c));
  QRM_RETURN_IF_ERROR(FinishShim(c));
  QRM_RETURN_IF_ERROR(FinishPodResources(c));
  QRM_RETURN_IF_ERROR(FinishSockets(c));
  if (c.log_format != "text" && c.log_format != "json") {
    return InvalidArgumentError(
        fmt::format("log_format: invalid value {} (text or json)", Quote(c.log_format)));
  }
  return c;
}

}  // namespace qrm::host

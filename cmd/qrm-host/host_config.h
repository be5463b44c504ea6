// HostConfig: qrm-host's configuration, from flags and its JSON config file (common/config),
// validated completely before anything starts.
#pragma once

#include <string>

#include <boost/program_options.hpp>

#include "common/http/http_server.h"
#include "common/status.h"
#include "cri-shim/shim_options.h"
#include "qrm/admin/admin_server.h"
#include "qrm/host/host.h"
#include "qrm/podresources/pod_resources_server.h"

namespace qrm::host {

struct HostConfig {
  HostOptions host;
  shim::ShimOptions shim;
  podresources::PodResourcesOptions pod_resources;
  admin::AdminOptions admin;
  std::string metrics_address = "127.0.0.1:9464";  // "" disables /metrics and health
  http::ConnectionLimits http_limits;
  std::string log_level = "info";
  std::string log_format = "text";
};

// Raw flag values, bound to the options_description; Finish() turns them into a HostConfig.
class HostFlags {
 public:
  HostFlags();
  boost::program_options::options_description& description() { return desc_; }
  // Validates and converts; errors name the key and the value.
  StatusOr<HostConfig> Finish() const;

 private:
  void AddCriFlags();
  void AddAdmissionFlags();
  void AddPodResourcesFlags();
  void AddOperationFlags();
  // Finish's steps, each for one part of the configuration.
  Status FinishDurations(HostConfig& c) const;
  Status FinishTopology(HostConfig& c) const;
  Status FinishQos(HostConfig& c) const;
  Status FinishAdmission(HostConfig& c) const;
  Status FinishShim(HostConfig& c) const;
  Status FinishPodResources(HostConfig& c) const;
  Status FinishSockets(HostConfig& c) const;

  boost::program_options::options_description desc_{"qrm-host options"};
  HostConfig defaults_;
  std::string reconcile_period_ = "3s";
  std::string rpc_timeout_ = "10s";
  std::string runtime_timeout_ = "10s";
  std::string policy_ = "best-effort";
  std::string scope_ = "container";
  std::string socket_mode_;
  std::string socket_group_;
  std::string max_message_size_ = "16Mi";
  std::vector<std::string> skip_namespaces_;
  std::vector<std::string> failure_policies_;
  std::vector<std::string> always_consult_;
  std::vector<std::string> aliases_;
  std::vector<std::string> accompanying_;
  std::string roles_json_;
  std::string roles_file_;
  std::vector<std::string> device_resources_;
  std::vector<std::string> policy_options_;
  std::string admin_allowed_uids_;  // "": the --socket-allowed-uids list
  std::string socket_allowed_uids_ = "0";
  std::string socket_allowed_gids_;
  std::string qrm_socket_group_;
  std::string plugin_max_message_size_ = "16Mi";
  int max_connections_per_peer_ = PeerAllowlist::kDefaultMaxConnectionsPerPeer;
  HostConfig values_;
};

}  // namespace qrm::host

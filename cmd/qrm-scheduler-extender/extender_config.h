// The qrm-scheduler-extender's configuration: flags and the --config JSON (common/config),
// each validated before anything starts (errors name the key and the value).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "cluster/loadaware/args.h"
#include "cluster/scheduler/informers.h"
#include "cluster/webhook/webhook_config.h"
#include "common/status.h"

namespace qrm::extender_cmd {

struct ExtenderConfig {
  std::string address = "0.0.0.0:10262";         // filter, prioritize, bind, /metrics, /healthz
  std::string kubeconfig;                        // "": $KUBECONFIG, in-cluster, ~/.kube/config
  std::string load_aware_args_file;              // "": Koordinator's defaults
  cluster::loadaware::LoadAwareArgs load_aware;  // read from the file, defaulted and validated
  cluster::scheduler::InformerOptions informers;
  std::chrono::milliseconds sync_timeout{std::chrono::seconds(60)};
  // The pod webhook (docs/webhook.md): off while webhook_address is "".
  std::string webhook_address;
  std::string webhook_cert_file;
  std::string webhook_key_file;
  webhook::WebhookConfig webhook;
  std::string log_level = "info";
  std::string log_format = "text";
};

class ExtenderFlags {
 public:
  ExtenderFlags();
  boost::program_options::options_description& description() { return desc_; }
  StatusOr<ExtenderConfig> Finish() const;

 private:
  Status FinishWebhook(ExtenderConfig& c) const;

  boost::program_options::options_description desc_{"qrm-scheduler-extender options"};
  ExtenderConfig values_;
  std::string sync_timeout_ = "60s";
  std::string min_watch_timeout_ = "5m";
  std::vector<std::string> plugin_resources_;
  std::vector<std::string> plugin_resource_prefixes_ = {"qrm.io/"};
};

}  // namespace qrm::extender_cmd

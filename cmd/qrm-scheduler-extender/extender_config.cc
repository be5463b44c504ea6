#include "cmd/qrm-scheduler-extender/extender_config.h"

#include <fmt/format.h>

#include "cluster/scheduler/args_file.h"
#include "common/config/config.h"
#include "common/log.h"
#include "common/quote.h"

namespace po = boost::program_options;

namespace qrm::extender_cmd {

ExtenderFlags::ExtenderFlags() {
  ExtenderConfig& v = values_;
  auto add = desc_.add_options();
  add("address", po::value(&v.address)->default_value(v.address),
      "IP:PORT for the extender verbs (/filter, /prioritize, /bind) and /metrics, /healthz, "
      "/readyz");
  add("kubeconfig", po::value(&v.kubeconfig)->default_value(v.kubeconfig),
      "cluster configuration (\"\": $KUBECONFIG, the pod's service account, ~/.kube/config)");
  add("load-aware-args", po::value(&v.load_aware_args_file)->default_value(v.load_aware_args_file),
      "a file with LoadAwareSchedulingArgs (YAML or JSON, Koordinator's fields; \"\": its "
      "defaults)");
  add("watch-nodes", po::value(&v.informers.watch_nodes)->default_value(v.informers.watch_nodes),
      "watch Node objects (needed with nodeCacheCapable: true)");
  add("min-watch-timeout", po::value(&min_watch_timeout_)->default_value(min_watch_timeout_),
      "a watch lasts between this and twice this before it is renewed");
  add("sync-timeout", po::value(&sync_timeout_)->default_value(sync_timeout_),
      "/readyz fails until the first lists arrived; this long at most before serving anyway");
  add("webhook-address", po::value(&v.webhook_address)->default_value(v.webhook_address),
      "IP:PORT for the pod webhook over HTTPS (/mutate/pods; \"\": no webhook)");
  add("webhook-tls-cert-file", po::value(&v.webhook_cert_file)->default_value(v.webhook_cert_file),
      "the webhook's serving certificate (PEM chain; reloaded when it changes)");
  add("webhook-tls-key-file", po::value(&v.webhook_key_file)->default_value(v.webhook_key_file),
      "the webhook's private key (PEM)");
  add("plugin-resource", po::value(&plugin_resources_)->composing()->default_value({}, ""),
      "an extended resource served by a qrm plugin (repeatable)");
  add("plugin-resource-prefix",
      po::value(&plugin_resource_prefixes_)
          ->composing()
          ->default_value(plugin_resource_prefixes_, "qrm.io/"),
      "extended resources with this prefix are served by qrm plugins (repeatable)");
  add("guaranteed-whole-cores-dedicated",
      po::value(&v.webhook.guaranteed_whole_cores_dedicated)
          ->default_value(v.webhook.guaranteed_whole_cores_dedicated),
      "a Guaranteed pod whose CPU limits are whole cores is dedicated_cores unless it says "
      "otherwise");
  add("log-level", po::value(&v.log_level)->default_value(v.log_level), "trace..off");
  add("log-format", po::value(&v.log_format)->default_value(v.log_format), "text or json");
}

Status ExtenderFlags::FinishWebhook(ExtenderConfig& c) const {
  c.webhook.plugin_resources = plugin_resources_;
  c.webhook.plugin_resource_prefixes = plugin_resource_prefixes_;
  QRM_RETURN_IF_ERROR(webhook::ValidateWebhookConfig(c.webhook));
  if (c.webhook_address.empty()) return Status::Ok();
  if (c.webhook_cert_file.empty() || c.webhook_key_file.empty()) {
    return InvalidArgumentError(
        fmt::format("webhook-address {}: needs webhook-tls-cert-file and webhook-tls-key-file "
                    "(the API server calls webhooks over HTTPS only)",
                    Quote(c.webhook_address)));
  }
  return Status::Ok();
}

StatusOr<ExtenderConfig> ExtenderFlags::Finish() const {
  ExtenderConfig c = values_;
  QRM_RETURN_IF_ERROR(config::CheckLogFlags(c.log_level, c.log_format));
  QRM_ASSIGN_OR_RETURN(c.sync_timeout, config::ParseDuration(sync_timeout_, "sync-timeout"));
  QRM_ASSIGN_OR_RETURN(const std::chrono::milliseconds watch,
                       config::ParseDuration(min_watch_timeout_, "min-watch-timeout"));
  if (watch < std::chrono::seconds(1)) {
    return InvalidArgumentError(
        fmt::format("min-watch-timeout {}: must be 1s or more", Quote(min_watch_timeout_)));
  }
  c.informers.min_watch_timeout = std::chrono::duration_cast<std::chrono::seconds>(watch);
  if (c.load_aware_args_file.empty()) {
    c.load_aware = cluster::loadaware::DefaultArgs();
  } else {
    QRM_ASSIGN_OR_RETURN(c.load_aware,
                         cluster::scheduler::ReadLoadAwareArgsFile(c.load_aware_args_file));
  }
  QRM_RETURN_IF_ERROR(FinishWebhook(c));
  return c;
}

}  // namespace qrm::extender_cmd

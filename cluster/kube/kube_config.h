// Where the Kubernetes API server is and how to authenticate to it (docs/kubernetes-api.md):
// from the pod's service account (in cluster) or from a kubeconfig file, as kubectl reads it.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace qrm::kube {

struct ClusterConfig {
  std::string server;  // "https://10.96.0.1:443" or "http://...", maybe with a path prefix
  // The CA that signs the server's certificate, as PEM data or a file (read again at every
  // connection, so a rotated bundle is picked up); with neither, the system's trust store.
  std::string ca_data;
  std::string ca_file;
  std::string tls_server_name;  // verified instead of the server URL's host when set
  bool insecure_skip_tls_verify = false;
  std::string token;       // a bearer token
  std::string token_file;  // or a file holding it, read again at every request: bound
                           // service-account tokens rotate
  // A client certificate and its key, PEM data or files; both or neither.
  std::string client_cert_data;
  std::string client_cert_file;
  std::string client_key_data;
  std::string client_key_file;
  std::chrono::milliseconds timeout{10000};  // per request, from resolving to the last byte
  std::string namespace_name;  // the service account's or the context's namespace, or empty
  std::string source;          // "in-cluster" or "kubeconfig <path> context <name>"
};

// Reads an environment variable (nullopt when unset); tests pass their own map.
using EnvGetter = std::function<std::optional<std::string>(const std::string& name)>;
EnvGetter ProcessEnv();

// Reads a whole file; errors name the path. Tests and the fuzz target pass their own.
using FileReader = std::function<StatusOr<std::string>(const std::string& path)>;
FileReader RealFileReader();

// The service account of the pod this runs in: KUBERNETES_SERVICE_HOST and _PORT (an IPv6
// host is bracketed), and <root>/var/run/secrets/kubernetes.io/serviceaccount/{token, ca.crt,
// namespace}; `root` is empty in production, a temporary directory in tests. Outside a pod
// (either variable unset or empty): kFailedPrecondition. The token and CA files must exist and
// are read again at every request.
StatusOr<ClusterConfig> LoadInClusterConfig(const std::string& root = "",
                                            const EnvGetter& env = ProcessEnv(),
                                            const FileReader& read = RealFileReader());

// A kubeconfig file (YAML as kubectl writes it, or JSON) and one of its contexts: `context`,
// or the file's current-context when empty. Relative file names in it are relative to the
// file's folder. Refused: exec plugins, auth providers, basic auth, impersonation and proxies
// (kUnimplemented, naming the field), unknown fields and contradictory ones
// (kInvalidArgument), a context that does not exist (kNotFound). Every error names the field
// path ("users[0].user.tokenFile") and its value (secrets are never quoted).
StatusOr<ClusterConfig> LoadKubeconfig(const std::string& path, std::string_view context = "",
                                       const FileReader& read = RealFileReader());

// The same from the file's text; `base_dir` resolves relative names and `read` checks the
// files it names (the fuzz target's entry point).
StatusOr<ClusterConfig> ParseKubeconfig(std::string_view text, const std::string& base_dir,
                                        std::string_view context, const FileReader& read);

// What a node agent uses, first found wins: `kubeconfig` (a flag) when not empty, then
// $KUBECONFIG (a single file), then the pod's service account, then $HOME/.kube/config.
// kFailedPrecondition naming all four when none applies.
StatusOr<ClusterConfig> LoadClusterConfig(const std::string& kubeconfig,
                                          const std::string& in_cluster_root = "",
                                          const EnvGetter& env = ProcessEnv(),
                                          const FileReader& read = RealFileReader());

}  // namespace qrm::kube

#include "cluster/kube/kube_config.h"

#include <map>
#include <string>
#include <string_view>

#include <catch2/catch.hpp>
#include <sys/stat.h>

#include "testing/temp_dir.h"

namespace qrm::kube {
namespace {

using Catch::Matchers::Contains;
using qrm::testing::TempDir;
using qrm::testing::WriteFile;

constexpr std::string_view kCaPem =
    "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n";
// base64 of kCaPem
constexpr std::string_view kCaData =
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJmYWtlCi0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K";
constexpr std::string_view kKeyPem =
    "-----BEGIN PRIVATE KEY-----\nMIGHfake\n-----END PRIVATE KEY-----\n";
// base64 of kKeyPem
constexpr std::string_view kKeyData =
    "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JR0hmYWtlCi0tLS0tRU5EIFBSSVZBVEUgS0VZLS0tLS0K";

// A kubeconfig as kubectl writes it: two clusters, two users, two contexts.
std::string TwoContexts() {
  return "apiVersion: v1\n"
         "clusters:\n"
         "- cluster:\n"
         "    certificate-authority-data: " +
         std::string(kCaData) +
         "\n"
         "    server: https://10.0.0.1:6443\n"
         "  name: prod\n"
         "- cluster:\n"
         "    certificate-authority: certs/ca.crt\n"
         "    server: https://[fd00::1]:8443/k8s\n"
         "    tls-server-name: api.internal\n"
         "  name: lab\n"
         "contexts:\n"
         "- context:\n"
         "    cluster: prod\n"
         "    user: admin\n"
         "  name: prod-admin\n"
         "- context:\n"
         "    cluster: lab\n"
         "    namespace: qrm-system\n"
         "    user: agent   # a service account token file\n"
         "  name: lab-agent\n"
         "current-context: prod-admin\n"
         "kind: Config\n"
         "preferences: {}\n"
         "users:\n"
         "- name: admin\n"
         "  user:\n"
         "    client-certificate-data: " +
         std::string(kCaData) +
         "\n"
         "    client-key-data: " +
         std::string(kKeyData) +
         "\n"
         "- name: agent\n"
         "  user:\n"
         "    tokenFile: ../token\n";
}

// A folder holding conf/kubeconfig, conf/certs/ca.crt and token.
struct KubeconfigDir {
  TempDir dir;
  std::string path = dir.File("conf/kubeconfig");

  explicit KubeconfigDir(const std::string& text) {
    ::mkdir(dir.File("conf").c_str(), 0755);
    ::mkdir(dir.File("conf/certs").c_str(), 0755);
    WriteFile(dir.File("conf/certs/ca.crt"), std::string(kCaPem));
    WriteFile(dir.File("token"), "file-token\n");
    WriteFile(path, text);
  }
};

// The error of a kubeconfig made of `text`, in a folder with the usual files.
Status Error(const std::string& text, std::string_view context = "") {
  KubeconfigDir d(text);
  StatusOr<ClusterConfig> config = LoadKubeconfig(d.path, context);
  INFO(text);
  REQUIRE_FALSE(config.ok());
  return config.status();
}

// A one-cluster, one-user kubeconfig with `cluster` and `user` lines (each indented 4).
std::string Minimal(std::string_view cluster, std::string_view user) {
  return "clusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:6443\n" +
         std::string(cluster) +
         "contexts:\n- name: x\n  context:\n    cluster: c\n    user: u\n"
         "current-context: x\n"
         "users:\n- name: u\n  user:\n" +
         std::string(user);
}

TEST_CASE("kubeconfig current-context selects its cluster and user") {
  KubeconfigDir d(TwoContexts());
  StatusOr<ClusterConfig> config = LoadKubeconfig(d.path);
  REQUIRE(config.ok());
  CHECK(config->server == "https://10.0.0.1:6443");
  CHECK(config->ca_data == kCaPem);
  CHECK(config->ca_file.empty());
  CHECK(config->client_cert_data == kCaPem);
  CHECK(config->client_key_data == kKeyPem);
  CHECK(config->token.empty());
  CHECK(config->namespace_name.empty());
  CHECK_THAT(config->source, Contains(d.path) && Contains("prod-admin"));
}

TEST_CASE("kubeconfig second context resolves relative files against its folder") {
  KubeconfigDir d(TwoContexts());
  StatusOr<ClusterConfig> config = LoadKubeconfig(d.path, "lab-agent");
  REQUIRE(config.ok());
  CHECK(config->server == "https://[fd00::1]:8443/k8s");
  CHECK(config->ca_file == d.dir.File("conf/certs/ca.crt"));
  CHECK(config->ca_data.empty());
  CHECK(config->tls_server_name == "api.internal");
  CHECK(config->token_file == d.dir.File("conf/../token"));
  CHECK(config->namespace_name == "qrm-system");
  CHECK(config->client_cert_data.empty());
}

TEST_CASE("kubeconfig absolute file names are kept") {
  TempDir other;
  WriteFile(other.File("ca.pem"), std::string(kCaPem));
  KubeconfigDir d(
      Minimal("    certificate-authority: " + other.File("ca.pem") + "\n", "    token: abc\n"));
  StatusOr<ClusterConfig> config = LoadKubeconfig(d.path);
  REQUIRE(config.ok());
  CHECK(config->ca_file == other.File("ca.pem"));
  CHECK(config->token == "abc");
}

TEST_CASE("kubeconfig in JSON reads like its YAML") {
  const std::string json = R"({
  "apiVersion": "v1", "kind": "Config", "preferences": {},
  "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:6443",
                "certificate-authority-data": ")" +
                           std::string(kCaData) + R"("}}],
  "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u", "namespace": "ns1"}}],
  "current-context": "x",
  "users": [{"name": "u", "user": {"tokenFile": "certs/../../token"}}]
})";
  KubeconfigDir d(json);
  StatusOr<ClusterConfig> config = LoadKubeconfig(d.path);
  REQUIRE(config.ok());
  CHECK(config->server == "https://127.0.0.1:6443");
  CHECK(config->ca_data == kCaPem);
  CHECK(config->token_file == d.dir.File("conf/certs/../../token"));
  CHECK(config->namespace_name == "ns1");
}

TEST_CASE("kubeconfig insecure-skip-tls-verify and a context without a user") {
  KubeconfigDir d(
      "clusters:\n- name: c\n  cluster:\n    server: http://127.0.0.1:8080\n"
      "    insecure-skip-tls-verify: true\n"
      "contexts:\n- name: x\n  context:\n    cluster: c\ncurrent-context: x\n");
  StatusOr<ClusterConfig> config = LoadKubeconfig(d.path);
  REQUIRE(config.ok());
  CHECK(config->insecure_skip_tls_verify);
  CHECK(config->token.empty());
  CHECK(config->token_file.empty());
}

TEST_CASE("kubeconfig errors name the field path and the value") {
  struct Case {
    std::string cluster, user;
    StatusCode code;
    std::string field, value;
  };
  const Case cases[] = {
      {"", "    tokenFile: nope\n", StatusCode::kNotFound, "users[0].user.tokenFile:", "/nope"},
      {"    certificate-authority-data: '@@@'\n", "", StatusCode::kInvalidArgument,
       "clusters[0].cluster.certificate-authority-data:", "\"@@@\": not base64"},
      {"    certificate-authority-data: aGVsbG8=\n", "", StatusCode::kInvalidArgument,
       "clusters[0].cluster.certificate-authority-data:", "\"aGVsbG8=\": not PEM"},
      {"    certificate-authority: missing.crt\n", "", StatusCode::kNotFound,
       "clusters[0].cluster.certificate-authority:", "conf/missing.crt"},
      {"    insecure-skip-tls-verify: yes\n", "", StatusCode::kInvalidArgument,
       "clusters[0].cluster.insecure-skip-tls-verify:", "\"yes\": expected true or false"},
      {"    insecure-skip-tls-verify: true\n    certificate-authority: certs/ca.crt\n", "",
       StatusCode::kInvalidArgument,
       "clusters[0].cluster.insecure-skip-tls-verify:", "contradictory"},
      {"    proxy-url: http://proxy:3128\n", "", StatusCode::kUnimplemented,
       "clusters[0].cluster.proxy-url:", "proxies are not supported"},
      {"", "    token: a\n    tokenFile: t\n", StatusCode::kInvalidArgument,
       "users[0].user:", "both token and tokenFile"},
      {"", "    exec:\n      command: aws\n", StatusCode::kUnimplemented,
       "users[0].user.exec:", "exec credential plugins"},
      {"", "    auth-provider:\n      name: gcp\n", StatusCode::kUnimplemented,
       "users[0].user.auth-provider:", "auth providers"},
      {"", "    username: admin\n", StatusCode::kUnimplemented,
       "users[0].user.username:", "basic authentication"},
      {"", "    as: someone\n", StatusCode::kUnimplemented, "users[0].user.as:", "impersonation"},
      {"", "    token-file: t\n", StatusCode::kInvalidArgument,
       "users[0].user.token-file:", "unknown field"},
      {"", "    client-certificate: certs/ca.crt\n", StatusCode::kInvalidArgument,
       "users[0].user:", "a client certificate without its key"},
      {"", "    client-key-data: " + std::string(kCaData) + "\n", StatusCode::kInvalidArgument,
       "users[0].user.client-key-data:", "<redacted>: not PEM data with a PRIVATE KEY"},
      {"", "    token:\n      a: b\n", StatusCode::kInvalidArgument,
       "users[0].user.token:", "expected a string, got a mapping"},
  };
  for (const Case& c : cases) {
    const Status status = Error(Minimal(c.cluster, c.user));
    INFO(status.ToString());
    CHECK(status.code() == c.code);
    CHECK_THAT(status.message(), Contains(c.field) && Contains(c.value));
  }
}

TEST_CASE("kubeconfig errors in its structure name the field") {
  const std::string head = "clusters:\n- name: c\n  cluster:\n    server: ";
  const std::string tail =
      "contexts:\n- name: x\n  context:\n    cluster: c\n"
      "current-context: x\n";
  Status s = Error(head + "ftp://h\n" + tail);
  CHECK_THAT(s.message(), Contains("clusters[0].cluster.server:") && Contains("\"ftp://h\""));
  s = Error(head + "https://h:99999\n" + tail);
  CHECK_THAT(s.message(), Contains("clusters[0].cluster.server:") && Contains("\"99999\""));
  s = Error("clusters:\n- name: c\n  cluster: {}\n" + tail);
  CHECK_THAT(s.message(), Contains("clusters[0].cluster.server: missing"));
  s = Error(head + "https://h\n" + tail, "other");
  CHECK(s.code() == StatusCode::kNotFound);
  CHECK_THAT(s.message(), Contains("\"other\": no entry of that name in contexts"));
  s = Error(head +
            "https://h\ncontexts:\n- name: x\n  context:\n    cluster: d\n"
            "current-context: x\n");
  CHECK(s.code() == StatusCode::kNotFound);
  CHECK_THAT(s.message(), Contains("contexts[0].context.cluster: \"d\": no entry"));
  s = Error(head +
            "https://h\ncontexts:\n- name: x\n  context:\n    cluster: c\n"
            "- name: x\n  context:\n    cluster: c\ncurrent-context: x\n");
  CHECK_THAT(s.message(), Contains("contexts[1].name: \"x\": a second entry"));
  s = Error(head + "https://h\n" + "contexts: []\n");
  CHECK(s.code() == StatusCode::kFailedPrecondition);
  CHECK_THAT(s.message(), Contains("current-context: not set"));
  s = Error("apiVersion: v2\n" + head + "https://h\n" + tail);
  CHECK_THAT(s.message(), Contains("apiVersion: \"v2\""));
  s = Error("clusters: 3\n" + tail);
  CHECK_THAT(s.message(), Contains("clusters: expected a sequence, got a string"));
  s = Error("colors: 3\n" + tail);
  CHECK_THAT(s.message(), Contains("colors: unknown field"));
  s = Error(head + "https://h\n   bad: x\n" + tail);
  CHECK_THAT(s.message(), Contains("line 5 column 4: unexpected indentation"));
  CHECK_THAT(s.message(), Contains("kubeconfig /"));
}

TEST_CASE("kubeconfig errors never quote a secret") {
  const Status s = Error(Minimal("", "    token: 'sec ret'\n"));
  CHECK_THAT(s.message(), Contains("users[0].user.token: <redacted>"));
  CHECK_THAT(s.message(), !Contains("sec ret"));
}

// A pod's service account folder under a temporary root.
struct ServiceAccount {
  TempDir root;
  std::string dir = root.path() + "/var/run/secrets/kubernetes.io/serviceaccount";

  ServiceAccount() {
    std::string path;
    for (const char* part : {"/var", "/run", "/secrets", "/kubernetes.io", "/serviceaccount"}) {
      path += part;
      ::mkdir((root.path() + path).c_str(), 0755);
    }
    WriteFile(dir + "/token", "sa-token\n");
    WriteFile(dir + "/ca.crt", std::string(kCaPem));
    WriteFile(dir + "/namespace", "kube-system");
  }
};

EnvGetter Env(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST_CASE("in-cluster config from the service account folder") {
  ServiceAccount sa;
  StatusOr<ClusterConfig> config = LoadInClusterConfig(
      sa.root.path(),
      Env({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}}));
  REQUIRE(config.ok());
  CHECK(config->server == "https://10.96.0.1:443");
  CHECK(config->token_file == sa.dir + "/token");
  CHECK(config->ca_file == sa.dir + "/ca.crt");
  CHECK(config->namespace_name == "kube-system");
  CHECK(config->source == "in-cluster");
}

TEST_CASE("in-cluster config brackets an IPv6 host") {
  ServiceAccount sa;
  StatusOr<ClusterConfig> config = LoadInClusterConfig(
      sa.root.path(),
      Env({{"KUBERNETES_SERVICE_HOST", "fd00:10:96::1"}, {"KUBERNETES_SERVICE_PORT", "6443"}}));
  REQUIRE(config.ok());
  CHECK(config->server == "https://[fd00:10:96::1]:6443");
}

TEST_CASE("in-cluster config errors") {
  ServiceAccount sa;
  StatusOr<ClusterConfig> outside = LoadInClusterConfig(sa.root.path(), Env({}));
  CHECK(outside.status().code() == StatusCode::kFailedPrecondition);
  CHECK_THAT(outside.status().message(), Contains("KUBERNETES_SERVICE_HOST"));
  StatusOr<ClusterConfig> port = LoadInClusterConfig(
      sa.root.path(),
      Env({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "https"}}));
  CHECK_THAT(port.status().message(), Contains("KUBERNETES_SERVICE_PORT: \"https\""));
  ::unlink((sa.dir + "/token").c_str());
  StatusOr<ClusterConfig> no_token = LoadInClusterConfig(
      sa.root.path(),
      Env({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}}));
  CHECK(no_token.status().code() == StatusCode::kNotFound);
  CHECK_THAT(no_token.status().message(), Contains(sa.dir + "/token"));
}

TEST_CASE("cluster config sources in order of precedence") {
  ServiceAccount sa;
  KubeconfigDir d(Minimal("", "    token: from-file\n"));
  const std::map<std::string, std::string> pod = {{"KUBERNETES_SERVICE_HOST", "10.96.0.1"},
                                                  {"KUBERNETES_SERVICE_PORT", "443"}};
  auto with = [&](std::map<std::string, std::string> vars) {
    vars.insert(pod.begin(), pod.end());
    return Env(vars);
  };
  StatusOr<ClusterConfig> flag = LoadClusterConfig(d.path, sa.root.path(), with({}));
  REQUIRE(flag.ok());
  CHECK(flag->token == "from-file");
  StatusOr<ClusterConfig> env =
      LoadClusterConfig("", sa.root.path(), with({{"KUBECONFIG", d.path}}));
  REQUIRE(env.ok());
  CHECK_THAT(env->source, Contains(d.path));
  StatusOr<ClusterConfig> in_pod = LoadClusterConfig("", sa.root.path(), with({}));
  REQUIRE(in_pod.ok());
  CHECK(in_pod->source == "in-cluster");
  StatusOr<ClusterConfig> home =
      LoadClusterConfig("", sa.root.path(), Env({{"HOME", d.dir.File("none")}}));
  CHECK(home.status().code() == StatusCode::kFailedPrecondition);
  CHECK(LoadClusterConfig("", "", Env({{"KUBECONFIG", "a:b"}})).status().code() ==
        StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace qrm::kube

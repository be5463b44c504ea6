#include "cluster/kube/eviction.h"

#include <string>

#include <catch2/catch.hpp>
#include <sys/stat.h>

#include "cluster/kube/kube_config.h"
#include "testing/kube/test_api_server.h"
#include "testing/temp_dir.h"
#include "tests/unit/cluster/kube/test_client.h"

namespace qrm::kube {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using qrm::testing::EvictionAnswer;
using qrm::testing::RecordedEviction;
using qrm::testing::TempDir;
using qrm::testing::TestApiServer;
using qrm::testing::WriteFile;

constexpr char kBudgetMessage[] =
    "Cannot evict pod as it would violate the pod's disruption budget.";

RecordedEviction OnlyEviction(const TestApiServer& server) {
  const std::vector<RecordedEviction> seen = server.evictions();
  REQUIRE(seen.size() == 1);
  return seen[0];
}

TEST_CASE("the Eviction body is the policy v1 object the API server expects") {
  CHECK(EvictionBody("default", "web-1", {.grace_period_seconds = 30}) ==
        R"({"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"web-1",)"
        R"("namespace":"default"},"deleteOptions":{"gracePeriodSeconds":30}})");
  CHECK(EvictionBody("ns", "p", {.dry_run = true}) ==
        R"({"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"p",)"
        R"("namespace":"ns"},"deleteOptions":{"dryRun":["All"]}})");
  CHECK(EvictionBody("ns", "p", {}) ==
        R"({"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"p","namespace":"ns"}})");
}

TEST_CASE("eviction over HTTP is evicted and the server sees the body and grace period") {
  TestApiServer server;
  REQUIRE(server.Start().ok());
  const EvictionResult r =
      EvictPod(TestClientFor(server), "default", "web-1", {.grace_period_seconds = 30});
  CHECK(r.outcome == EvictionOutcome::kEvicted);
  CHECK(r.http_code == 201);
  const RecordedEviction seen = OnlyEviction(server);
  CHECK(seen.pod_namespace == "default");
  CHECK(seen.name == "web-1");
  CHECK(seen.grace_period_seconds == 30);
  CHECK_FALSE(seen.dry_run);
  CHECK(seen.content_type == "application/json");
  CHECK(seen.body == EvictionBody("default", "web-1", {.grace_period_seconds = 30}));
  CHECK(seen.code == 201);
}

TEST_CASE("eviction over HTTPS with the CA verified") {
  TestApiServer server({.tls = true});
  REQUIRE(server.Start().ok());
  const EvictionResult r = EvictPod(TestClientFor(server), "batch", "job-7.x");
  CHECK(r.outcome == EvictionOutcome::kEvicted);
  const RecordedEviction seen = OnlyEviction(server);
  CHECK(seen.name == "job-7.x");
  CHECK_FALSE(seen.grace_period_seconds.has_value());
}

TEST_CASE("eviction over HTTPS with the wrong CA is an error naming the URL") {
  TestApiServer server({.tls = true});
  REQUIRE(server.Start().ok());
  StatusOr<qrm::testing::TestPki> other = qrm::testing::MakeTestPki("not the server's CA");
  REQUIRE(other.ok());
  ClusterConfig config;
  config.server = server.url();
  config.ca_data = other->ca.cert_pem;
  config.token = "test-token";
  StatusOr<KubeClient> client = KubeClient::Create(config);
  REQUIRE(client.ok());
  const EvictionResult r = EvictPod(*client, "default", "web-1");
  CHECK(r.outcome == EvictionOutcome::kError);
  CHECK(r.http_code == 0);
  CHECK_THAT(r.message, Contains(server.url() + "/api/v1/namespaces/default/pods/web-1/eviction") &&
                            Contains("certificate verify failed"));
  CHECK(server.evictions().empty());
}

TEST_CASE("a disruption budget blocks the eviction with the server's message") {
  TestApiServer server;
  REQUIRE(server.Start().ok());
  server.SetEvictionAnswer("default", "db-0", EvictionAnswer::kBudget);
  const EvictionResult r = EvictPod(TestClientFor(server), "default", "db-0");
  CHECK(r.outcome == EvictionOutcome::kBlockedByBudget);
  CHECK(r.http_code == 429);
  CHECK_THAT(r.message, StartsWith(kBudgetMessage));
  CHECK_THAT(r.message, Contains("The disruption budget db-0-pdb needs 1 healthy pods"));
  CHECK(EvictPod(TestClientFor(server), "default", "db-1").outcome == EvictionOutcome::kEvicted);
}

TEST_CASE("a pod already gone is reported gone") {
  TestApiServer server;
  REQUIRE(server.Start().ok());
  server.SetDefaultEvictionAnswer(EvictionAnswer::kNotFound);
  const EvictionResult r = EvictPod(TestClientFor(server), "default", "web-1");
  CHECK(r.outcome == EvictionOutcome::kGone);
  CHECK(r.http_code == 404);
  CHECK(r.message == "pods \"web-1\" not found");
}

TEST_CASE("a server error is an error with the Status message") {
  TestApiServer server;
  REQUIRE(server.Start().ok());
  server.SetEvictionAnswer("default", "web-1", EvictionAnswer::kServerError);
  const EvictionResult r = EvictPod(TestClientFor(server), "default", "web-1");
  CHECK(r.outcome == EvictionOutcome::kError);
  CHECK(r.http_code == 500);
  CHECK_THAT(r.message, Contains("POST " + server.url()) && Contains("500 InternalError") &&
                            Contains("scripted failure"));
}

TEST_CASE("eviction without the right token is an error and evicts nothing") {
  TestApiServer server;
  REQUIRE(server.Start().ok());
  for (const char* token : {"", "stale-token"}) {
    const EvictionResult r = EvictPod(TestClientFor(server, token), "default", "web-1");
    INFO(token);
    CHECK(r.outcome == EvictionOutcome::kError);
    CHECK(r.http_code == 401);
    CHECK_THAT(r.message, Contains("401 Unauthorized"));
  }
  CHECK(server.evictions().empty());
  CHECK(server.unauthorized() == 2);
}

TEST_CASE("a dry run sends dryRun All") {
  TestApiServer server;
  REQUIRE(server.Start().ok());
  const EvictionResult r = EvictPod(TestClientFor(server), "default", "web-1",
                                    {.grace_period_seconds = 0, .dry_run = true});
  CHECK(r.outcome == EvictionOutcome::kEvicted);
  const RecordedEviction seen = OnlyEviction(server);
  CHECK(seen.dry_run);
  CHECK(seen.grace_period_seconds == 0);
  CHECK_THAT(seen.body, Contains(R"("dryRun":["All"])"));
}

TEST_CASE("bad names and grace periods are refused before any request") {
  TestApiServer server;
  REQUIRE(server.Start().ok());
  const KubeClient client = TestClientFor(server);
  const struct {
    const char* ns;
    const char* name;
    const char* message;
  } cases[] = {
      {"default/../kube-system", "p", "pod namespace: \"default/../kube-system\""},
      {"Default", "p", "pod namespace: \"Default\""},
      {"", "p", "pod namespace: \"\""},
      {"default", "p?dryRun=All", "pod name: \"p?dryRun=All\""},
      {"default", "../secrets", "pod name: \"../secrets\""},
      {"default", "a..b", "pod name: \"a..b\""},
      {"default", "-a", "pod name: \"-a\""},
  };
  for (const auto& c : cases) {
    const EvictionResult r = EvictPod(client, c.ns, c.name);
    CHECK(r.outcome == EvictionOutcome::kError);
    CHECK_THAT(r.message, Contains(c.message));
  }
  const EvictionResult negative = EvictPod(client, "default", "p", {.grace_period_seconds = -1});
  CHECK_THAT(negative.message, Contains("grace period -1 s"));
  CHECK(EvictPod(client, std::string(63, 'a'), std::string(253, 'b')).outcome ==
        EvictionOutcome::kEvicted);
  CHECK(EvictPod(client, std::string(64, 'a'), "p").outcome == EvictionOutcome::kError);
  CHECK(server.requests() == 1);
}

TEST_CASE("the test server checks the Eviction body against its path") {
  TestApiServer server;
  REQUIRE(server.Start().ok());
  const KubeClient client = TestClientFor(server);
  const std::string path = "/api/v1/namespaces/default/pods/web-1/eviction";
  const auto code = [&](const std::string& body, const std::string& type = "application/json") {
    StatusOr<KubeResponse> r = client.Request("POST", path, body, type);
    REQUIRE(r.ok());
    return r->code;
  };
  CHECK(code(EvictionBody("default", "web-1", {})) == 201);
  CHECK(code(EvictionBody("default", "web-2", {})) == 400);
  CHECK(code(EvictionBody("other", "web-1", {})) == 400);
  CHECK(code(R"({"apiVersion":"policy/v1beta2","kind":"Eviction","metadata":{"name":"web-1"}})") ==
        400);
  CHECK(code(R"({"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"web-1"}})") == 201);
  CHECK(code(EvictionBody("default", "web-1", {}), "application/yaml") == 415);
  CHECK(code("not json") == 400);
  CHECK(server.evictions().size() == 7);
}

// A service account folder for the test server: its CA and token, under a temporary root.
void WriteServiceAccount(const TestApiServer& server, const std::string& root) {
  std::string dir = root;
  for (const char* part : {"/var", "/run", "/secrets", "/kubernetes.io", "/serviceaccount"}) {
    dir += part;
    ::mkdir(dir.c_str(), 0755);
  }
  WriteFile(dir + "/token", "test-token\n");
  WriteFile(dir + "/ca.crt", server.pki().ca.cert_pem);
}

TEST_CASE("in-cluster config evicts through the test server over HTTPS") {
  TestApiServer server({.tls = true});
  REQUIRE(server.Start().ok());
  TempDir root;
  WriteServiceAccount(server, root.path());
  const std::string port = server.url().substr(server.url().rfind(':') + 1);
  StatusOr<ClusterConfig> config =
      LoadInClusterConfig(root.path(), [&](const std::string& name) -> std::optional<std::string> {
        if (name == "KUBERNETES_SERVICE_HOST") return "127.0.0.1";
        if (name == "KUBERNETES_SERVICE_PORT") return port;
        return std::nullopt;
      });
  REQUIRE(config.ok());
  StatusOr<KubeClient> client = KubeClient::Create(*config);
  REQUIRE(client.ok());
  CHECK(EvictPod(*client, "default", "web-1").outcome == EvictionOutcome::kEvicted);
  CHECK(OnlyEviction(server).name == "web-1");
}

TEST_CASE("a kubeconfig with a CA file and a token file evicts over HTTPS") {
  TestApiServer server({.tls = true});
  REQUIRE(server.Start().ok());
  TempDir dir;
  WriteFile(dir.File("ca.crt"), server.pki().ca.cert_pem);
  WriteFile(dir.File("token"), "test-token");
  WriteFile(dir.File("kubeconfig"),
            "apiVersion: v1\nkind: Config\n"
            "clusters:\n- name: test\n  cluster:\n"
            "    certificate-authority: ca.crt\n"
            "    server: " +
                server.url() +
                "\n"
                "contexts:\n- name: test\n  context:\n"
                "    cluster: test\n    user: agent\n"
                "current-context: test\n"
                "users:\n- name: agent\n  user:\n    tokenFile: token\n");
  StatusOr<ClusterConfig> config = LoadKubeconfig(dir.File("kubeconfig"));
  REQUIRE(config.ok());
  StatusOr<KubeClient> client = KubeClient::Create(*config);
  REQUIRE(client.ok());
  const EvictionResult r = EvictPod(*client, "kube-system", "coredns-1", {.dry_run = true});
  CHECK(r.outcome == EvictionOutcome::kEvicted);
  CHECK(OnlyEviction(server).dry_run);
}

}  // namespace
}  // namespace qrm::kube

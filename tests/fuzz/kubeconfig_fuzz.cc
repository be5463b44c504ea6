// Fuzzes the kubeconfig reader (cluster/kube/kube_config.h) and its YAML subset
// (cluster/kube/kube_yaml.h): a kubeconfig is written by kubectl, by hand and by other tools,
// and a node agent must refuse what it cannot read, never misread it.
//
// Input: the kubeconfig's text (YAML or JSON). Files it names are served by a fake reader:
// names ending in "ca.crt"/"cert.pem" hold a certificate, "key.pem" a key, "token" a token;
// others do not exist. Properties beyond "does not crash":
//  * a document the YAML/JSON reader accepts, written as JSON (ToJson), reads back (ParseJson)
//    to the same JSON text; a refused one is kInvalidArgument;
//  * every kubeconfig error is kInvalidArgument, kUnimplemented, kNotFound or
//    kFailedPrecondition, with a message of one line of printable ASCII no longer than 2 KiB
//    (whatever bytes the file held: values are quoted and cut);
//  * an accepted configuration is usable as it is: its server URL parses, KubeClient::Create
//    accepts it, at most one of token and token file, no CA with insecure-skip-tls-verify,
//    a client certificate exactly when a client key;
//  * a second parse agrees.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cluster/kube/http_client.h"
#include "cluster/kube/kube_client.h"
#include "cluster/kube/kube_config.h"
#include "cluster/kube/kube_yaml.h"
#include "common/quote.h"

namespace {

using qrm::StatusCode;
using qrm::StatusOr;
using qrm::kube::ClusterConfig;

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "kubeconfig_fuzz: %s\n", what);
  std::abort();
}

void Check(bool ok, const char* what) {
  if (!ok) Fail(what);
}

void CheckMessage(const std::string& message) {
  Check(!message.empty(), "an empty message");
  Check(message.size() <= 2048, "a message longer than 2 KiB");
  for (const char c : message) Check(c >= 0x20 && c < 0x7f, "a message byte not printable ASCII");
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.ends_with(suffix);
}

StatusOr<std::string> FakeRead(const std::string& path) {
  if (EndsWith(path, "ca.crt") || EndsWith(path, "cert.pem")) {
    return std::string("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
  }
  if (EndsWith(path, "key.pem")) {
    return std::string("-----BEGIN EC PRIVATE KEY-----\nMHc\n-----END EC PRIVATE KEY-----\n");
  }
  if (EndsWith(path, "token")) return std::string("abc.def\n");
  return qrm::NotFoundError("open " + qrm::Quote(path) + ": No such file or directory");
}

void CheckDocument(std::string_view text) {
  const StatusOr<qrm::kube::DocNode> doc = qrm::kube::ParseYamlOrJson(text);
  if (!doc.ok()) {
    Check(doc.status().code() == StatusCode::kInvalidArgument, "a YAML error not kInvalidArgument");
    CheckMessage(doc.status().message());
    return;
  }
  const std::string json = qrm::kube::ToJson(*doc);
  const StatusOr<qrm::kube::DocNode> again = qrm::kube::ParseJson(json);
  Check(again.ok(), "the JSON of an accepted document does not parse");
  Check(qrm::kube::ToJson(*again) == json, "the JSON round trip changed the document");
}

void CheckConfig(const ClusterConfig& c) {
  Check(qrm::kube::ParseUrl(c.server).ok(), "an accepted server URL that does not parse");
  Check(c.token.empty() || c.token_file.empty(), "both a token and a token file");
  Check(!c.insecure_skip_tls_verify || (c.ca_data.empty() && c.ca_file.empty()),
        "a CA with insecure-skip-tls-verify");
  const bool cert = !c.client_cert_data.empty() || !c.client_cert_file.empty();
  const bool key = !c.client_key_data.empty() || !c.client_key_file.empty();
  Check(cert == key, "a client certificate without a key, or a key without a certificate");
  Check(qrm::kube::KubeClient::Create(c).ok(), "KubeClient refuses an accepted configuration");
}

bool Same(const ClusterConfig& a, const ClusterConfig& b) {
  return a.server == b.server && a.ca_data == b.ca_data && a.ca_file == b.ca_file &&
         a.token == b.token && a.token_file == b.token_file &&
         a.client_cert_data == b.client_cert_data && a.client_key_file == b.client_key_file &&
         a.insecure_skip_tls_verify == b.insecure_skip_tls_verify &&
         a.namespace_name == b.namespace_name && a.tls_server_name == b.tls_server_name;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  CheckDocument(text);
  const StatusOr<ClusterConfig> config = qrm::kube::ParseKubeconfig(text, "/kube", "", FakeRead);
  const StatusOr<ClusterConfig> again = qrm::kube::ParseKubeconfig(text, "/kube", "", FakeRead);
  if (!config.ok()) {
    const StatusCode code = config.status().code();
    Check(code == StatusCode::kInvalidArgument || code == StatusCode::kUnimplemented ||
              code == StatusCode::kNotFound || code == StatusCode::kFailedPrecondition,
          "an error with an undocumented code");
    CheckMessage(config.status().message());
    Check(!again.ok() && again.status() == config.status(), "two parses disagree");
    return 0;
  }
  CheckConfig(*config);
  Check(again.ok() && Same(*config, *again), "two parses disagree");
  return 0;
}

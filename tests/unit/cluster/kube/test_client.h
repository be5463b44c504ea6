// A client of the in-process test API server (testing/kube/test_api_server.h), trusting the
// server's CA when it serves TLS, as the kube, drain and other API tests need it.
#pragma once

#include <string>
#include <utility>

#include <catch2/catch.hpp>

#include "cluster/kube/kube_client.h"
#include "testing/kube/test_api_server.h"

namespace qrm::kube {

inline KubeClient TestClientFor(const testing::TestApiServer& server,
                                std::string token = "test-token") {
  ClusterConfig config;
  config.server = server.url();
  config.ca_data = server.pki().ca.cert_pem;  // empty without TLS
  config.token = std::move(token);
  StatusOr<KubeClient> client = KubeClient::Create(config);
  REQUIRE(client.ok());
  return std::move(client).value();
}

}  // namespace qrm::kube

// Certificates made in process for TLS tests (OpenSSL, P-256 keys, valid from an hour ago for
// a day): a CA, a server certificate it signs for 127.0.0.1 and localhost, client
// certificates. Nothing touches the disk.
#pragma once

#include <string>

#include "common/status.h"

namespace qrm::testing {

struct TestCertificate {
  std::string cert_pem;
  std::string key_pem;
};

struct TestPki {
  TestCertificate ca;      // self-signed, CA:TRUE
  TestCertificate server;  // signed by ca; SAN IP:127.0.0.1, DNS:localhost; serverAuth
};

// A fresh CA (named `ca_name`) and its server certificate.
StatusOr<TestPki> MakeTestPki(const std::string& ca_name = "qrm test CA");

// A client certificate for `common_name` (clientAuth) signed by `ca`.
StatusOr<TestCertificate> MakeClientCertificate(const TestCertificate& ca,
                                                const std::string& common_name);

}  // namespace qrm::testing

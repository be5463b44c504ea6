#include "testing/kube/test_certificates.h"

#include <atomic>
#include <memory>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace qrm::testing {
namespace {

using KeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using CertPtr = std::unique_ptr<X509, decltype(&X509_free)>;
using BioPtr = std::unique_ptr<BIO, decltype(&BIO_free)>;

struct CertSpec {
  std::string common_name;
  bool ca = false;
  std::string extended_key_usage;  // "serverAuth", "clientAuth"
  std::string subject_alt_name;    // "IP:127.0.0.1,DNS:localhost" or empty
};

bool AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) return false;
  const bool added = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return added;
}

bool AddExtensions(X509* cert, X509* issuer, const CertSpec& spec) {
  bool ok = AddExtension(cert, issuer, NID_basic_constraints,
                         spec.ca ? "critical,CA:TRUE" : "critical,CA:FALSE");
  ok = ok && AddExtension(cert, issuer, NID_key_usage,
                          spec.ca ? "critical,keyCertSign,cRLSign" : "critical,digitalSignature");
  ok = ok && AddExtension(cert, issuer, NID_subject_key_identifier, "hash");
  if (!spec.extended_key_usage.empty()) {
    ok = ok && AddExtension(cert, issuer, NID_ext_key_usage, spec.extended_key_usage);
  }
  if (!spec.subject_alt_name.empty()) {
    ok = ok && AddExtension(cert, issuer, NID_subject_alt_name, spec.subject_alt_name);
  }
  return ok;
}

// A certificate for `key`, signed by `issuer_key` (`issuer` null: self-signed).
CertPtr MakeCert(EVP_PKEY* key, const CertSpec& spec, X509* issuer, EVP_PKEY* issuer_key) {
  static std::atomic<long> serial{1000};
  CertPtr cert(X509_new(), X509_free);
  if (!cert) return cert;
  X509* c = cert.get();
  X509_set_version(c, 2);  // v3
  ASN1_INTEGER_set(X509_get_serialNumber(c), serial++);
  X509_gmtime_adj(X509_getm_notBefore(c), -3600);
  X509_gmtime_adj(X509_getm_notAfter(c), 86400);
  X509_set_pubkey(c, key);
  X509_NAME* name = X509_get_subject_name(c);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(spec.common_name.c_str()), -1,
                             -1, 0);
  X509_set_issuer_name(c, issuer != nullptr ? X509_get_subject_name(issuer) : name);
  if (!AddExtensions(c, issuer != nullptr ? issuer : c, spec) ||
      X509_sign(c, issuer_key, EVP_sha256()) == 0) {
    cert.reset();
  }
  return cert;
}

std::string BioText(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(n));
}

StatusOr<TestCertificate> ToPem(X509* cert, EVP_PKEY* key) {
  BioPtr cert_bio(BIO_new(BIO_s_mem()), BIO_free);
  BioPtr key_bio(BIO_new(BIO_s_mem()), BIO_free);
  if (!cert_bio || !key_bio || PEM_write_bio_X509(cert_bio.get(), cert) != 1 ||
      PEM_write_bio_PrivateKey(key_bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return InternalError("writing a test certificate as PEM failed");
  }
  return TestCertificate{BioText(cert_bio.get()), BioText(key_bio.get())};
}

StatusOr<TestCertificate> Issue(const CertSpec& spec, X509* issuer, EVP_PKEY* issuer_key) {
  KeyPtr key(EVP_EC_gen("P-256"), EVP_PKEY_free);
  if (!key) return InternalError("generating a P-256 key failed");
  EVP_PKEY* signer = issuer_key != nullptr ? issuer_key : key.get();
  CertPtr cert = MakeCert(key.get(), spec, issuer, signer);
  if (!cert) return InternalError("making the test certificate " + spec.common_name + " failed");
  return ToPem(cert.get(), key.get());
}

// The CA's certificate and key back from PEM, to sign with.
Status ReadCa(const TestCertificate& ca, CertPtr& cert, KeyPtr& key) {
  BioPtr cert_bio(BIO_new_mem_buf(ca.cert_pem.data(), static_cast<int>(ca.cert_pem.size())),
                  BIO_free);
  BioPtr key_bio(BIO_new_mem_buf(ca.key_pem.data(), static_cast<int>(ca.key_pem.size())), BIO_free);
  if (!cert_bio || !key_bio) return InternalError("BIO_new_mem_buf failed");
  cert.reset(PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr));
  key.reset(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
  if (!cert || !key) return InvalidArgumentError("the CA is not a PEM certificate and key");
  return Status::Ok();
}

}  // namespace

StatusOr<TestPki> MakeTestPki(const std::string& ca_name) {
  TestPki pki;
  QRM_ASSIGN_OR_RETURN(pki.ca, Issue({ca_name, true, "", ""}, nullptr, nullptr));
  CertPtr ca_cert(nullptr, X509_free);
  KeyPtr ca_key(nullptr, EVP_PKEY_free);
  QRM_RETURN_IF_ERROR(ReadCa(pki.ca, ca_cert, ca_key));
  QRM_ASSIGN_OR_RETURN(
      pki.server, Issue({"qrm test API server", false, "serverAuth", "IP:127.0.0.1,DNS:localhost"},
                        ca_cert.get(), ca_key.get()));
  return pki;
}

StatusOr<TestCertificate> MakeClientCertificate(const TestCertificate& ca,
                                                const std::string& common_name) {
  CertPtr ca_cert(nullptr, X509_free);
  KeyPtr ca_key(nullptr, EVP_PKEY_free);
  QRM_RETURN_IF_ERROR(ReadCa(ca, ca_cert, ca_key));
  return Issue({common_name, false, "clientAuth", ""}, ca_cert.get(), ca_key.get());
}

}  // namespace qrm::testing

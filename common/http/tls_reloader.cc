#include "common/http/tls_reloader.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/stat.h>

#include "common/errno_text.h"
#include "common/log.h"
#include "common/quote.h"

namespace qrm::http {
namespace ssl = boost::asio::ssl;

namespace {

StatusOr<std::string> ReadPem(const std::string& key, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return InvalidArgumentError(
        fmt::format("tls {} {}: cannot read: {}", key, Quote(path), ErrnoText(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The private key alone, so that a bad key file is named as such (OpenSSL's own error for a
// key given after its certificate mixes both up).
StatusOr<std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>> ParseKey(const TlsFiles& files,
                                                                       const std::string& pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
  EVP_PKEY* key = bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr;
  if (key == nullptr) {
    return InvalidArgumentError(
        fmt::format("tls key_file {}: no PEM private key in it", Quote(files.key_file)));
  }
  return std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>(key, &EVP_PKEY_free);
}

std::string FileStamp(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return fmt::format("{}:{}.{}:{}", st.st_ino, st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_size);
}

}  // namespace

StatusOr<std::shared_ptr<ssl::context>> LoadTlsContext(const TlsFiles& files) {
  QRM_ASSIGN_OR_RETURN(const std::string cert_pem, ReadPem("cert_file", files.cert_file));
  QRM_ASSIGN_OR_RETURN(const std::string key_pem, ReadPem("key_file", files.key_file));
  QRM_ASSIGN_OR_RETURN(auto key, ParseKey(files, key_pem));
  auto context = std::make_shared<ssl::context>(ssl::context::tls_server);
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  boost::system::error_code ec;
  context->use_certificate_chain(boost::asio::buffer(cert_pem), ec);
  if (ec) {
    return InvalidArgumentError(fmt::format("tls cert_file {}: no PEM certificate chain in it ({})",
                                            Quote(files.cert_file), ec.message()));
  }
  X509* leaf = SSL_CTX_get0_certificate(context->native_handle());
  if (leaf == nullptr || X509_check_private_key(leaf, key.get()) != 1) {
    return InvalidArgumentError(
        fmt::format("tls key_file {} is not the key of the certificate in cert_file {}",
                    Quote(files.key_file), Quote(files.cert_file)));
  }
  if (SSL_CTX_use_PrivateKey(context->native_handle(), key.get()) != 1) {
    return InvalidArgumentError(
        fmt::format("tls key_file {}: OpenSSL refused the key", Quote(files.key_file)));
  }
  return context;
}

TlsReloader::TlsReloader(TlsFiles files, std::chrono::milliseconds check_interval)
    : files_(std::move(files)), check_interval_(check_interval) {}

std::string TlsReloader::Stamp() const {
  std::string cert = FileStamp(files_.cert_file);
  std::string key = FileStamp(files_.key_file);
  if (cert.empty() || key.empty()) return {};
  return cert + "|" + key;
}

Status TlsReloader::Load() {
  loaded_stamp_ = Stamp();
  QRM_ASSIGN_OR_RETURN(context_, LoadTlsContext(files_));
  next_check_ = std::chrono::steady_clock::now() + check_interval_;
  return Status::Ok();
}

std::shared_ptr<ssl::context> TlsReloader::Current() {
  const auto now = std::chrono::steady_clock::now();
  if (now < next_check_) return context_;
  next_check_ = now + check_interval_;
  const std::string stamp = Stamp();
  // A file missing for a moment (mid-rotation) is no new version: keep serving and look again.
  if (stamp.empty() || stamp == loaded_stamp_) return context_;
  loaded_stamp_ = stamp;
  auto loaded = LoadTlsContext(files_);
  if (!loaded.ok()) {
    Logger("http")->error(
        "tls: keeping the certificate loaded before: the changed files do not "
        "load: {}",
        loaded.status().message());
    return context_;
  }
  context_ = std::move(*loaded);
  Logger("http")->info("tls: reloaded cert_file {} and key_file {}", Quote(files_.cert_file),
                       Quote(files_.key_file));
  return context_;
}

}  // namespace qrm::http

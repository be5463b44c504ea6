#include "cluster/kube/kube_client.h"

#include <fmt/format.h>
#include <rapidjson/document.h>

#include "common/quote.h"

namespace qrm::kube {
namespace {

std::string Trimmed(std::string_view s) {
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return std::string(s);
}

// PEM data given inline, or read from its file now.
StatusOr<std::string> DataOrFile(const std::string& data, const std::string& file,
                                 std::string_view what) {
  if (!data.empty() || file.empty()) return data;
  StatusOr<std::string> read = RealFileReader()(file);
  if (!read.ok()) return read.status().WithContext(what);
  return read;
}

bool IsPrintablePath(std::string_view path) {
  for (const char c : path) {
    if (static_cast<unsigned char>(c) <= ' ' || static_cast<unsigned char>(c) >= 0x7f || c == '#') {
      return false;
    }
  }
  return !path.empty() && path[0] == '/';
}

std::string StringMember(const rapidjson::Value& v, const char* name) {
  const auto it = v.FindMember(name);
  if (it == v.MemberEnd() || !it->value.IsString()) return {};
  return std::string(it->value.GetString(), it->value.GetStringLength());
}

StatusCode CodeOf(int http) {
  switch (http) {
    case 400:
    case 422: return StatusCode::kInvalidArgument;
    case 401:
    case 403: return StatusCode::kPermissionDenied;
    case 404: return StatusCode::kNotFound;
    case 409: return StatusCode::kAborted;
    case 429: return StatusCode::kResourceExhausted;
    case 503: return StatusCode::kUnavailable;
    case 504: return StatusCode::kDeadlineExceeded;
    default: return http >= 500 ? StatusCode::kInternal : StatusCode::kUnknown;
  }
}

}  // namespace

StatusOr<KubeClient> KubeClient::Create(ClusterConfig config) {
  StatusOr<Url> url = ParseUrl(config.server);
  if (!url.ok()) return url.status();
  if (!config.token.empty() && !config.token_file.empty()) {
    return InvalidArgumentError("both a token and a token file are set; keep one");
  }
  if (config.timeout.count() <= 0) {
    return InvalidArgumentError(
        fmt::format("request timeout {} ms: must be above 0", config.timeout.count()));
  }
  return KubeClient(std::move(config), std::move(*url));
}

StatusOr<TlsConfig> KubeClient::LoadTls() const {
  TlsConfig tls;
  tls.insecure_skip_verify = config_.insecure_skip_tls_verify;
  tls.server_name = config_.tls_server_name;
  QRM_ASSIGN_OR_RETURN(tls.ca_pem, DataOrFile(config_.ca_data, config_.ca_file, "CA"));
  QRM_ASSIGN_OR_RETURN(
      tls.client_cert_pem,
      DataOrFile(config_.client_cert_data, config_.client_cert_file, "client certificate"));
  QRM_ASSIGN_OR_RETURN(tls.client_key_pem,
                       DataOrFile(config_.client_key_data, config_.client_key_file, "client key"));
  return tls;
}

// The bearer token, from its file when there is one: read at every request because the
// kubelet rewrites a projected service-account token before it expires.
StatusOr<std::string> KubeClient::LoadToken() const {
  std::string token = config_.token;
  if (!config_.token_file.empty()) {
    StatusOr<std::string> read = RealFileReader()(config_.token_file);
    if (!read.ok()) return read.status().WithContext("token file");
    token = Trimmed(*read);
    if (token.empty())
      return UnavailableError(fmt::format("token file {}: empty", config_.token_file));
  }
  for (const char c : token) {
    if (static_cast<unsigned char>(c) <= ' ' || static_cast<unsigned char>(c) >= 0x7f) {
      return InvalidArgumentError(
          "the bearer token holds a blank or a byte that is not "
          "printable ASCII");
    }
  }
  return token;
}

StatusOr<std::pair<TlsConfig, HttpRequest>> KubeClient::Prepare(
    std::string_view method, std::string_view path, std::string_view body,
    std::string_view content_type) const {
  if (!IsPrintablePath(path)) {
    return InvalidArgumentError(fmt::format(
        "request path {}: must start with '/' and hold only printable ASCII", Quote(path)));
  }
  const std::string where = fmt::format("{} {}", method, UrlOf(path));
  StatusOr<TlsConfig> tls = url_.tls ? LoadTls() : StatusOr<TlsConfig>(TlsConfig{});
  if (!tls.ok()) return tls.status().WithContext(where);
  StatusOr<std::string> token = LoadToken();
  if (!token.ok()) return token.status().WithContext(where);
  HttpRequest request{std::string(method), std::string(path), std::string(body), {}};
  request.headers.emplace_back("Accept", "application/json");
  if (!body.empty()) request.headers.emplace_back("Content-Type", std::string(content_type));
  if (!token->empty()) request.headers.emplace_back("Authorization", "Bearer " + *token);
  return std::make_pair(std::move(*tls), std::move(request));
}

StatusOr<KubeResponse> KubeClient::Request(std::string_view method, std::string_view path,
                                           std::string_view body,
                                           std::string_view content_type) const {
  QRM_ASSIGN_OR_RETURN(auto prepared, Prepare(method, path, body, content_type));
  QRM_ASSIGN_OR_RETURN(HttpResponse answer,
                       HttpCall(url_, prepared.first, prepared.second, config_.timeout));
  return KubeResponse{answer.status, std::move(answer.body), std::move(answer.content_type)};
}

StatusOr<KubeResponse> KubeClient::Stream(std::string_view path,
                                          std::chrono::milliseconds idle_timeout,
                                          const BodySink& sink, std::stop_token stop) const {
  QRM_ASSIGN_OR_RETURN(auto prepared, Prepare("GET", path, {}, {}));
  const StreamTimeouts timeouts{config_.timeout, idle_timeout};
  QRM_ASSIGN_OR_RETURN(HttpResponse answer, HttpStream(url_, prepared.first, prepared.second,
                                                       timeouts, sink, std::move(stop)));
  return KubeResponse{answer.status, std::move(answer.body), std::move(answer.content_type)};
}

std::optional<ApiStatus> ParseApiStatus(std::string_view body) {
  rapidjson::Document doc;
  doc.Parse(body.data(), body.size());
  if (doc.HasParseError() || !doc.IsObject() || StringMember(doc, "kind") != "Status") {
    return std::nullopt;
  }
  ApiStatus s;
  s.status = StringMember(doc, "status");
  s.reason = StringMember(doc, "reason");
  s.message = StringMember(doc, "message");
  if (const auto code = doc.FindMember("code"); code != doc.MemberEnd() && code->value.IsInt()) {
    s.code = code->value.GetInt();
  }
  const auto details = doc.FindMember("details");
  if (details == doc.MemberEnd() || !details->value.IsObject()) return s;
  const auto causes = details->value.FindMember("causes");
  if (causes == details->value.MemberEnd() || !causes->value.IsArray()) return s;
  for (const auto& cause : causes->value.GetArray()) {
    if (cause.IsObject() && !StringMember(cause, "message").empty()) {
      s.causes.push_back(StringMember(cause, "message"));
    }
  }
  return s;
}

std::string DescribeAnswer(const KubeResponse& response) {
  const std::optional<ApiStatus> status = ParseApiStatus(response.body);
  if (!status) {
    return fmt::format("{}: {}", response.code,
                       response.body.empty() ? "(empty body)" : Quote(response.body));
  }
  std::string text =
      fmt::format("{} {}: {}", response.code,
                  status->reason.empty() ? "(no reason)" : status->reason, status->message);
  for (const std::string& cause : status->causes) text += fmt::format(" ({})", cause);
  return text;
}

Status ApiError(std::string_view method, std::string_view url, const KubeResponse& response) {
  if (response.code >= 200 && response.code < 300) return Status::Ok();
  return Status(CodeOf(response.code),
                fmt::format("{} {}: {}", method, url, DescribeAnswer(response)));
}

}  // namespace qrm::kube

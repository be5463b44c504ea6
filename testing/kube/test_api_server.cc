#include "testing/kube/test_api_server.h"

#include <map>
#include <thread>
#include <utility>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <fmt/format.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "checkpoint/base64.h"
#include "common/mutex.h"

namespace qrm::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

constexpr std::string_view kEvictionPattern = "/api/v1/namespaces/{}/pods/{}/eviction";

std::vector<std::string_view> Segments(std::string_view path) {
  std::vector<std::string_view> out;
  size_t start = 1;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    out.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return out;
}

// Whether `path` fits `pattern` ({} matches one non-empty segment); fills the captures.
bool Match(std::string_view pattern, std::string_view path, std::vector<std::string>& params) {
  const std::vector<std::string_view> want = Segments(pattern);
  const std::vector<std::string_view> got = Segments(path);
  if (want.size() != got.size()) return false;
  params.clear();
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] == "{}" && !got[i].empty()) {
      params.emplace_back(got[i]);
    } else if (want[i] != got[i]) {
      return false;
    }
  }
  return true;
}

std::string StringMember(const rapidjson::Value& v, const char* name) {
  if (!v.IsObject()) return {};
  const auto it = v.FindMember(name);
  if (it == v.MemberEnd() || !it->value.IsString()) return {};
  return it->value.GetString();
}

struct Route {
  std::string method;
  std::string pattern;
  RouteHandler handler;
};

// Whether the server still runs: a feed's producer may post to the server's io_context only
// while it does (the context is gone after Stop).
struct RunGate {
  Mutex mu;
  bool open QRM_GUARDED_BY(mu) = true;
};

// What a session hands each request to (the server).
class RequestHandler {
 public:
  virtual ~RequestHandler() = default;
  virtual ApiResponse Handle(ApiRequest request, std::string_view authorization) = 0;
  virtual std::shared_ptr<RunGate> gate() const = 0;
};

std::string_view View(beast::string_view s) {
  return {s.data(), s.size()};
}

}  // namespace

ApiResponse StatusAnswer(int code, std::string_view reason, std::string_view message) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("kind");
  w.String("Status");
  w.Key("apiVersion");
  w.String("v1");
  w.Key("metadata");
  w.StartObject();
  w.EndObject();
  w.Key("status");
  w.String(code < 300 ? "Success" : "Failure");
  if (!message.empty()) {
    w.Key("message");
    w.String(message.data(), static_cast<rapidjson::SizeType>(message.size()));
  }
  if (!reason.empty()) {
    w.Key("reason");
    w.String(reason.data(), static_cast<rapidjson::SizeType>(reason.size()));
  }
  w.Key("code");
  w.Int(code);
  w.EndObject();
  return ApiResponse{code, buffer.GetString()};
}

class TestApiServer::Impl : public RequestHandler {
 public:
  explicit Impl(TestApiServerOptions options) : options_(std::move(options)) {
    routes_.push_back(
        {"POST", std::string(kEvictionPattern), [this](const ApiRequest& r) { return Evict(r); }});
  }

  Status Start();
  void Stop();
  ApiResponse Handle(ApiRequest request, std::string_view authorization) override;
  std::shared_ptr<RunGate> gate() const override { return gate_; }
  ApiResponse Evict(const ApiRequest& request);

  asio::io_context ioc_;  // first: destroyed last, with the sessions its handlers hold
  const TestApiServerOptions options_;
  TestPki pki_;
  std::optional<ssl::context> tls_;
  std::optional<tcp::acceptor> acceptor_;
  std::thread thread_;
  int port_ = 0;
  const std::shared_ptr<RunGate> gate_ = std::make_shared<RunGate>();

  mutable Mutex mu_;
  std::string token_ QRM_GUARDED_BY(mu_) = options_.token;
  std::vector<Route> routes_ QRM_GUARDED_BY(mu_);
  std::map<std::string, std::string> objects_ QRM_GUARDED_BY(mu_);
  std::map<std::pair<std::string, std::string>, EvictionAnswer> answers_ QRM_GUARDED_BY(mu_);
  EvictionAnswer default_answer_ QRM_GUARDED_BY(mu_) = EvictionAnswer::kEvict;
  std::vector<RecordedEviction> evictions_ QRM_GUARDED_BY(mu_);
  std::function<void(const RecordedEviction&)> on_evicted_ QRM_GUARDED_BY(mu_);
  int requests_ QRM_GUARDED_BY(mu_) = 0;
  int unauthorized_ QRM_GUARDED_BY(mu_) = 0;

 private:
  void Accept();
  Status MakeTlsContext();
  ApiResponse Dispatch(const ApiRequest& request);
};

namespace {

// One connection: (TLS handshake,) then read a request, answer, repeat while keep-alive.
template <typename Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

  template <typename... Args>
  Session(RequestHandler* server, Args&&... args)
      : server_(server), stream_(std::forward<Args>(args)...) {}

  void Start() {
    if constexpr (kTls) {
      beast::get_lowest_layer(stream_).expires_after(std::chrono::seconds(30));
      stream_.async_handshake(ssl::stream_base::server,
                              [self = this->shared_from_this()](beast::error_code ec) {
                                if (ec) return;
                                self->client_certificate_ = self->PeerVerified();
                                self->Read();
                              });
    } else {
      Read();
    }
  }

 private:
  bool PeerVerified() {
    SSL* handle = stream_.native_handle();
    return SSL_get0_peer_certificate(handle) != nullptr &&
           SSL_get_verify_result(handle) == X509_V_OK;
  }

  void Read() {
    request_ = {};
    beast::get_lowest_layer(stream_).expires_after(std::chrono::seconds(30));
    http::async_read(stream_, buffer_, request_,
                     [self = this->shared_from_this()](beast::error_code ec, size_t) {
                       if (!ec) self->Answer();
                     });
  }

  void Answer() {
    ApiRequest r;
    r.method = std::string(request_.method_string());
    const std::string_view target = View(request_.target());
    const size_t q = target.find('?');
    r.path = std::string(target.substr(0, q));
    if (q != std::string_view::npos) r.query = std::string(target.substr(q + 1));
    r.content_type = std::string(request_[http::field::content_type]);
    r.body = request_.body();
    r.client_certificate = client_certificate_;
    const ApiResponse a = server_->Handle(std::move(r), View(request_[http::field::authorization]));
    if (a.feed) return StartStream(a);
    response_ = {};
    response_.version(request_.version());
    response_.keep_alive(request_.keep_alive());
    response_.result(static_cast<unsigned>(a.code));
    response_.set(http::field::content_type, a.content_type);
    response_.body() = a.body;
    response_.prepare_payload();
    http::async_write(stream_, response_,
                      [self = this->shared_from_this()](beast::error_code ec, size_t) {
                        if (ec) return;
                        if (self->response_.keep_alive()) return self->Read();
                        beast::get_lowest_layer(self->stream_).close();
                      });
  }

  // A watch: the header, then each batch the feed gives as one chunk, then the last chunk and
  // the end of the connection. A read that fails meanwhile means the client went away.
  void StartStream(const ApiResponse& a) {
    feed_ = a.feed;
    beast::get_lowest_layer(stream_).expires_never();
    head_.version(11);
    head_.result(static_cast<unsigned>(a.code));
    head_.set(http::field::content_type, a.content_type);
    head_.keep_alive(false);
    head_.chunked(true);
    serializer_.emplace(head_);
    http::async_write_header(stream_, *serializer_,
                             [self = this->shared_from_this()](beast::error_code ec, size_t) {
                               if (ec) return self->End();
                               self->Pump();
                               self->ReadPeer();
                             });
    if (feed_->deadline()) {
      timer_.emplace(stream_.get_executor());
      timer_->expires_at(*feed_->deadline());
      timer_->async_wait([feed = feed_](beast::error_code ec) {
        if (!ec) feed->Close();
      });
    }
  }

  void Pump() {
    const auto weak = this->weak_from_this();
    WatchFeed::Batch batch =
        feed_->Take([weak, gate = server_->gate(), executor = stream_.get_executor()] {
          MutexLock lock(gate->mu);
          if (!gate->open) return;
          asio::post(executor, [weak] {
            if (auto self = weak.lock()) self->Pump();
          });
        });
    auto self = this->shared_from_this();
    if (!batch.data.empty()) {
      chunk_ = std::move(batch.data);
      asio::async_write(stream_, http::make_chunk(asio::buffer(chunk_)),
                        [self](beast::error_code ec, size_t) {
                          if (ec) return self->End();
                          self->Pump();
                        });
    } else if (batch.closed) {
      asio::async_write(stream_, http::make_chunk_last(),
                        [self](beast::error_code, size_t) { self->End(); });
    }
  }

  void ReadPeer() {
    stream_.async_read_some(asio::buffer(peer_bytes_),
                            [self = this->shared_from_this()](beast::error_code ec, size_t) {
                              if (ec) return self->End();
                              self->ReadPeer();  // a client sends nothing more; ignore it
                            });
  }

  void End() {
    feed_->Cancel();
    if (timer_) timer_->cancel();
    beast::error_code ignored;
    beast::get_lowest_layer(stream_).socket().shutdown(tcp::socket::shutdown_both, ignored);
    beast::get_lowest_layer(stream_).close();
  }

  RequestHandler* const server_;
  Stream stream_;
  bool client_certificate_ = false;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  http::response<http::string_body> response_;
  // A watch.
  std::shared_ptr<WatchFeed> feed_;
  http::response<http::empty_body> head_;
  std::optional<http::response_serializer<http::empty_body>> serializer_;
  std::optional<asio::steady_timer> timer_;
  std::string chunk_;
  char peer_bytes_[512];
};

}  // namespace

Status TestApiServer::Impl::MakeTlsContext() {
  QRM_ASSIGN_OR_RETURN(pki_, MakeTestPki());
  tls_.emplace(ssl::context::tls_server);
  beast::error_code ec;
  tls_->use_certificate_chain(asio::buffer(pki_.server.cert_pem), ec);
  if (!ec) tls_->use_private_key(asio::buffer(pki_.server.key_pem), ssl::context::pem, ec);
  if (!ec && options_.accept_client_certificates) {
    tls_->add_certificate_authority(asio::buffer(pki_.ca.cert_pem), ec);
    if (!ec) tls_->set_verify_mode(ssl::verify_peer, ec);
    // A client without a certificate (or with an untrusted one) still connects; it must then
    // authenticate with the token, as with the real API server.
    tls_->set_verify_callback([](bool, ssl::verify_context&) { return true; });
  }
  if (ec) return InternalError("test API server TLS setup: " + ec.message());
  return Status::Ok();
}

Status TestApiServer::Impl::Start() {
  if (options_.tls) QRM_RETURN_IF_ERROR(MakeTlsContext());
  beast::error_code ec;
  acceptor_.emplace(ioc_);
  const tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), 0);
  acceptor_->open(endpoint.protocol(), ec);
  if (!ec) acceptor_->bind(endpoint, ec);
  if (!ec) acceptor_->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return UnavailableError("test API server: listening on 127.0.0.1: " + ec.message());
  port_ = acceptor_->local_endpoint().port();
  Accept();
  thread_ = std::thread([this] { ioc_.run(); });
  return Status::Ok();
}

void TestApiServer::Impl::Accept() {
  acceptor_->async_accept([this](beast::error_code ec, tcp::socket socket) {
    if (ec) return;  // closed by Stop
    if (tls_) {
      std::make_shared<Session<beast::ssl_stream<beast::tcp_stream>>>(this, std::move(socket),
                                                                      *tls_)
          ->Start();
    } else {
      std::make_shared<Session<beast::tcp_stream>>(this, std::move(socket))->Start();
    }
    Accept();
  });
}

void TestApiServer::Impl::Stop() {
  if (!thread_.joinable()) return;
  {
    MutexLock lock(gate_->mu);
    gate_->open = false;
  }
  asio::post(ioc_, [this] {
    beast::error_code ignored;
    acceptor_->close(ignored);
    ioc_.stop();
  });
  thread_.join();
}

ApiResponse TestApiServer::Impl::Handle(ApiRequest request, std::string_view authorization) {
  {
    MutexLock lock(mu_);
    ++requests_;
    if (authorization != "Bearer " + token_ && !request.client_certificate) {
      ++unauthorized_;
      return StatusAnswer(401, "Unauthorized", "Unauthorized");
    }
  }
  return Dispatch(request);
}

// The first route whose pattern and method fit; 405 when only the method differs; a stored
// object for a GET; 404 otherwise. The handler runs without the lock (it may take it).
ApiResponse TestApiServer::Impl::Dispatch(const ApiRequest& request) {
  RouteHandler handler;
  ApiRequest matched = request;
  bool other_method = false;
  {
    MutexLock lock(mu_);
    for (const auto& route : routes_) {
      if (!Match(route.pattern, request.path, matched.params)) continue;
      if (route.method != request.method) {
        other_method = true;
        continue;
      }
      handler = route.handler;
      break;
    }
    const auto object = objects_.find(request.path);
    if (!handler && request.method == "GET" && object != objects_.end()) {
      return ApiResponse{200, object->second};
    }
  }
  if (handler) return handler(matched);
  if (other_method) {
    return StatusAnswer(405, "MethodNotAllowed",
                        fmt::format("the server does not allow this method on the requested "
                                    "resource ({} {})",
                                    request.method, request.path));
  }
  return StatusAnswer(404, "NotFound", "the server could not find the requested resource");
}

namespace {

// The API server's checks of an Eviction body against its path; an error answer, or nothing.
std::optional<ApiResponse> CheckEviction(const ApiRequest& r, const rapidjson::Document& doc,
                                         RecordedEviction& rec) {
  const std::string_view type =
      std::string_view(r.content_type).substr(0, r.content_type.find(';'));
  if (type != "application/json") {
    return StatusAnswer(415, "UnsupportedMediaType",
                        fmt::format("the body of the request was in an unknown format - "
                                    "accepted media types include: application/json (got \"{}\")",
                                    r.content_type));
  }
  if (doc.HasParseError() || !doc.IsObject()) {
    return StatusAnswer(400, "BadRequest", "the body is not a JSON object");
  }
  if (StringMember(doc, "apiVersion") != "policy/v1" || StringMember(doc, "kind") != "Eviction") {
    return StatusAnswer(400, "BadRequest",
                        fmt::format("expected apiVersion policy/v1 kind Eviction, got \"{}\" "
                                    "\"{}\"",
                                    StringMember(doc, "apiVersion"), StringMember(doc, "kind")));
  }
  const auto meta = doc.FindMember("metadata");
  const rapidjson::Value empty(rapidjson::kObjectType);
  const rapidjson::Value& m = meta != doc.MemberEnd() ? meta->value : empty;
  if (StringMember(m, "name") != rec.name) {
    return StatusAnswer(400, "BadRequest", "name in URL does not match name in Eviction object");
  }
  const std::string ns = StringMember(m, "namespace");
  if (!ns.empty() && ns != rec.pod_namespace) {
    return StatusAnswer(400, "BadRequest",
                        "the namespace of the provided object does not match the namespace "
                        "sent on the request");
  }
  return std::nullopt;
}

// deleteOptions: gracePeriodSeconds (an integer) and dryRun (["All"] or []).
std::optional<ApiResponse> ReadDeleteOptions(const rapidjson::Document& doc,
                                             RecordedEviction& rec) {
  const auto opts = doc.FindMember("deleteOptions");
  if (opts == doc.MemberEnd()) return std::nullopt;
  if (!opts->value.IsObject())
    return StatusAnswer(400, "BadRequest", "deleteOptions: not an object");
  const auto grace = opts->value.FindMember("gracePeriodSeconds");
  if (grace != opts->value.MemberEnd()) {
    if (!grace->value.IsInt64()) {
      return StatusAnswer(400, "BadRequest", "gracePeriodSeconds: not an integer");
    }
    rec.grace_period_seconds = grace->value.GetInt64();
  }
  const auto dry = opts->value.FindMember("dryRun");
  if (dry == opts->value.MemberEnd()) return std::nullopt;
  if (!dry->value.IsArray() || dry->value.Size() > 1 ||
      (dry->value.Size() == 1 &&
       (!dry->value[0].IsString() || std::string_view(dry->value[0].GetString()) != "All"))) {
    return StatusAnswer(400, "BadRequest", "dryRun: supported values: \"All\"");
  }
  rec.dry_run = dry->value.Size() == 1;
  return std::nullopt;
}

ApiResponse ScriptedAnswer(EvictionAnswer answer, const RecordedEviction& rec) {
  switch (answer) {
    case EvictionAnswer::kEvict: return StatusAnswer(201, "", "");
    case EvictionAnswer::kBudget: {
      ApiResponse r =
          StatusAnswer(429, "TooManyRequests",
                       "Cannot evict pod as it would violate the pod's disruption budget.");
      // The real server names the budget in details.causes.
      const std::string cause = fmt::format(
          R"(,"details":{{"causes":[{{"reason":"DisruptionBudget","message":"The disruption )"
          R"(budget {}-pdb needs 1 healthy pods and has 1 currently"}}]}}}})",
          rec.name);
      r.body.pop_back();
      r.body += cause;
      return r;
    }
    case EvictionAnswer::kNotFound:
      return StatusAnswer(404, "NotFound", fmt::format("pods \"{}\" not found", rec.name));
    case EvictionAnswer::kServerError:
      return StatusAnswer(500, "InternalError", "Internal error occurred: scripted failure");
  }
  return StatusAnswer(500, "InternalError", "unknown scripted answer");
}

}  // namespace

ApiResponse TestApiServer::Impl::Evict(const ApiRequest& request) {
  RecordedEviction rec;
  rec.pod_namespace = request.params.at(0);
  rec.name = request.params.at(1);
  rec.content_type = request.content_type;
  rec.body = request.body;
  rapidjson::Document doc;
  doc.Parse(request.body.data(), request.body.size());
  std::optional<ApiResponse> answer = CheckEviction(request, doc, rec);
  if (!answer) answer = ReadDeleteOptions(doc, rec);
  std::function<void(const RecordedEviction&)> on_evicted;
  {
    MutexLock lock(mu_);
    if (!answer) {
      const auto scripted = answers_.find({rec.pod_namespace, rec.name});
      answer = ScriptedAnswer(scripted != answers_.end() ? scripted->second : default_answer_, rec);
    }
    rec.code = answer->code;
    evictions_.push_back(rec);
    if (rec.code == 201 && !rec.dry_run) on_evicted = on_evicted_;
  }
  if (on_evicted) on_evicted(rec);  // without the lock: it may call back into the server
  return *answer;
}

TestApiServer::TestApiServer(TestApiServerOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

TestApiServer::~TestApiServer() {
  Stop();
}

Status TestApiServer::Start() {
  return impl_->Start();
}
void TestApiServer::Stop() {
  impl_->Stop();
}

std::string TestApiServer::url() const {
  return fmt::format("{}://127.0.0.1:{}", impl_->options_.tls ? "https" : "http", impl_->port_);
}

std::string TestApiServer::Kubeconfig() const {
  std::string token;
  {
    MutexLock lock(impl_->mu_);
    token = impl_->token_;
  }
  const std::string ca = impl_->options_.tls ? "\n    certificate-authority-data: " +
                                                   checkpoint::Base64Encode(impl_->pki_.ca.cert_pem)
                                             : "";
  return fmt::format(
      "apiVersion: v1\nkind: Config\nclusters:\n- name: test\n  cluster:\n    server: {}{}\n"
      "contexts:\n- name: test\n  context:\n    cluster: test\n    user: test\n"
      "current-context: test\nusers:\n- name: test\n  user:\n    token: {}\n",
      url(), ca, token);
}

const TestPki& TestApiServer::pki() const {
  return impl_->pki_;
}

void TestApiServer::AddRoute(std::string method, std::string pattern, RouteHandler handler) {
  MutexLock lock(impl_->mu_);
  impl_->routes_.push_back({std::move(method), std::move(pattern), std::move(handler)});
}

void TestApiServer::SetToken(std::string token) {
  MutexLock lock(impl_->mu_);
  impl_->token_ = std::move(token);
}

void TestApiServer::PutObject(std::string path, std::string json) {
  MutexLock lock(impl_->mu_);
  impl_->objects_[std::move(path)] = std::move(json);
}

void TestApiServer::SetEvictionAnswer(const std::string& pod_namespace, const std::string& name,
                                      EvictionAnswer answer) {
  MutexLock lock(impl_->mu_);
  impl_->answers_[{pod_namespace, name}] = answer;
}

void TestApiServer::SetDefaultEvictionAnswer(EvictionAnswer answer) {
  MutexLock lock(impl_->mu_);
  impl_->default_answer_ = answer;
}

void TestApiServer::OnEvicted(std::function<void(const RecordedEviction&)> hook) {
  MutexLock lock(impl_->mu_);
  impl_->on_evicted_ = std::move(hook);
}

std::vector<RecordedEviction> TestApiServer::evictions() const {
  MutexLock lock(impl_->mu_);
  return impl_->evictions_;
}

int TestApiServer::requests() const {
  MutexLock lock(impl_->mu_);
  return impl_->requests_;
}

int TestApiServer::unauthorized() const {
  MutexLock lock(impl_->mu_);
  return impl_->unauthorized_;
}

}  // namespace qrm::testing

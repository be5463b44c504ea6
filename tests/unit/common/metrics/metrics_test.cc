// The metrics registry's exposition format and the HTTP endpoints serving it.
#include "common/metrics/metrics.h"

#include <thread>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <catch2/catch.hpp>

#include "common/http/http_server.h"

namespace qrm {
namespace {

TEST_CASE("exposition: counters, gauges and histograms with escaped labels") {
  metrics::Registry r;
  r.GetCounter("qrm_cri_calls_total", "CRI calls.",
               {{"method", "Version"}, {"mode", "passthrough"}})
      .Inc();
  r.GetCounter("qrm_cri_calls_total", "CRI calls.",
               {{"method", "Version"}, {"mode", "passthrough"}})
      .Inc(2);
  r.GetCounter("qrm_cri_calls_total", "CRI calls.", {{"method", "X"}, {"mode", "a\"b"}}).Inc(-5);
  r.GetGauge("qrm_plugins_registered", "Plugins.").Set(3);
  auto& h = r.GetHistogram("qrm_admission_seconds", "Admission latency.", {{"phase", "hints"}},
                           {0.001, 0.01});
  h.Observe(0.0005);
  h.Observe(0.005);
  h.Observe(5);
  const std::string text = r.Exposition();
  CHECK_THAT(text, Catch::Contains("# TYPE qrm_cri_calls_total counter\n"));
  CHECK_THAT(text,
             Catch::Contains("qrm_cri_calls_total{method=\"Version\",mode=\"passthrough\"} 3\n"));
  CHECK_THAT(text, Catch::Contains("qrm_cri_calls_total{method=\"X\",mode=\"a\\\"b\"} 0\n"));
  CHECK_THAT(text, Catch::Contains("qrm_plugins_registered 3\n"));
  CHECK_THAT(text,
             Catch::Contains("qrm_admission_seconds_bucket{phase=\"hints\",le=\"0.001\"} 1\n"));
  CHECK_THAT(text,
             Catch::Contains("qrm_admission_seconds_bucket{phase=\"hints\",le=\"0.01\"} 2\n"));
  CHECK_THAT(text,
             Catch::Contains("qrm_admission_seconds_bucket{phase=\"hints\",le=\"+Inf\"} 3\n"));
  CHECK_THAT(text, Catch::Contains("qrm_admission_seconds_count{phase=\"hints\"} 3\n"));
  CHECK_THAT(text, Catch::Contains("qrm_admission_seconds_sum{phase=\"hints\"} 5.0055\n"));
}

TEST_CASE("counters are exact under concurrent increments") {
  metrics::Registry r;
  metrics::Counter& c = r.GetCounter("c_total", "c");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) c.Inc();
    });
  }
  for (auto& t : threads) t.join();
  CHECK(c.Value() == 40000);
}

struct Got {
  int status = 0;
  std::string body;
};

Got Get(int port, const std::string& target) {
  namespace beast = boost::beast;
  boost::asio::io_context io;
  beast::tcp_stream stream(io);
  stream.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"),
                                                static_cast<unsigned short>(port)));
  beast::http::request<beast::http::empty_body> req(beast::http::verb::get, target, 11);
  req.set(beast::http::field::host, "localhost");
  beast::http::write(stream, req);
  beast::flat_buffer buffer;
  beast::http::response<beast::http::string_body> res;
  beast::http::read(stream, buffer, res);
  return {static_cast<int>(res.result_int()), res.body()};
}

TEST_CASE("HTTP server: /metrics, /healthz, /readyz follow readiness, unknown paths 404") {
  std::atomic<bool> ready{false};
  metrics::Default().GetCounter("qrm_test_http_total", "test").Inc(7);
  http::HttpServer server("127.0.0.1:0", http::StandardRoutes([&] { return ready.load(); }));
  REQUIRE(server.Start().ok());
  REQUIRE(server.port() > 0);
  CHECK(Get(server.port(), "/healthz").status == 200);
  CHECK(Get(server.port(), "/readyz").status == 503);
  ready = true;
  CHECK(Get(server.port(), "/readyz").status == 200);
  Got m = Get(server.port(), "/metrics");
  CHECK(m.status == 200);
  CHECK_THAT(m.body, Catch::Contains("qrm_test_http_total 7"));
  CHECK(Get(server.port(), "/nope").status == 404);
  server.Stop();
}

TEST_CASE("HTTP server: a bad address names the key") {
  for (const char* bad : {"localhost", "127.0.0.1", "1.2.3.4:99999", "x:80", ":80"}) {
    http::HttpServer server(bad, {});
    Status s = server.Start();
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK_THAT(s.message(), Catch::Contains("metrics_address"));
  }
}

}  // namespace
}  // namespace qrm

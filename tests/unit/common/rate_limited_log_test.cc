// RateLimitedLog keeps a flood of one kind of line bounded and reports what it dropped;
// CapText bounds messages that embed what a client sent.
#include "common/rate_limited_log.h"

#include <mutex>
#include <thread>

#include <catch2/catch.hpp>
#include <spdlog/sinks/base_sink.h>

namespace qrm {
namespace {

class Lines : public spdlog::sinks::base_sink<std::mutex> {
 public:
  std::vector<std::string> Get() {
    std::lock_guard lock(mutex_);
    return lines_;
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    lines_.emplace_back(msg.payload.data(), msg.payload.size());
  }
  void flush_() override {}

 private:
  std::vector<std::string> lines_;
};

std::shared_ptr<spdlog::logger> TestLogger(std::shared_ptr<Lines> sink) {
  return std::make_shared<spdlog::logger>("rate-test", sink);
}

TEST_CASE("the first burst lines of an interval are written, the rest counted and reported") {
  auto sink = std::make_shared<Lines>();
  {
    RateLimitedLog log(TestLogger(sink), "refusal lines", 5, std::chrono::milliseconds(200));
    for (int i = 0; i < 3000; ++i) log.Log(spdlog::level::warn, "refused {}", i);
    CHECK(sink->Get().size() == 5);
    CHECK(log.suppressed_total() == 2995);
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    log.Log(spdlog::level::warn, "refused again");  // a new interval: report, then the line
    const auto lines = sink->Get();
    REQUIRE(lines.size() == 7);
    CHECK(lines[5].find("suppressed 2995 more refusal lines") != std::string::npos);
    CHECK(lines[6] == "refused again");
    log.Log(spdlog::level::warn, "one more");
  }
  CHECK(sink->Get().size() == 8);  // nothing left to report at destruction
}

TEST_CASE("what was suppressed is reported when the limiter goes away") {
  auto sink = std::make_shared<Lines>();
  {
    RateLimitedLog log(TestLogger(sink), "lines", 1, std::chrono::seconds(60));
    log.Log(spdlog::level::info, "a");
    log.Log(spdlog::level::info, "b");
    log.Log(spdlog::level::info, "c");
  }
  const auto lines = sink->Get();
  REQUIRE(lines.size() == 2);
  CHECK(lines[1].find("suppressed 2 more lines") != std::string::npos);
}

TEST_CASE("CapText keeps short text and cuts long text, noting its size") {
  CHECK(CapText("short", 10) == "short");
  const std::string cut = CapText(std::string(1 << 20, 'v'), 16);
  CHECK(cut == std::string(16, 'v') + "...(1048576 bytes)");
}

}  // namespace
}  // namespace qrm

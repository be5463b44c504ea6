#include "common/stop_stack.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace qrm {
namespace {

TEST_CASE("StopStack stops newest first when destroyed", "[stop_stack]") {
  std::vector<std::string> order;
  {
    StopStack stops;
    stops.Push([&] { order.push_back("http"); });
    stops.Push([&] { order.push_back("host"); });
    stops.Push([&] { order.push_back("shim"); });
    CHECK(stops.size() == 3);
  }
  CHECK(order == std::vector<std::string>{"shim", "host", "http"});
}

TEST_CASE("StopStack runs each stop once however often StopAll is called", "[stop_stack]") {
  int stopped = 0;
  StopStack stops;
  stops.Push([&] { ++stopped; });
  stops.StopAll();
  stops.StopAll();
  CHECK(stopped == 1);
  CHECK(stops.size() == 0);
}

TEST_CASE("StopStack stops a part pushed again before the parts started after it", "[stop_stack]") {
  std::vector<std::string> order;
  bool http_running = true;
  auto stop_http = [&] {
    if (http_running) order.push_back("http");
    http_running = false;
  };
  {
    StopStack stops;
    stops.Push(stop_http);
    stops.Push([&] { order.push_back("host"); });
    stops.Push(stop_http);  // its collectors read the host from here on
  }
  CHECK(order == std::vector<std::string>{"http", "host"});
}

}  // namespace
}  // namespace qrm

#include "cluster/kube/watch_events.h"

#include <string>

#include <catch2/catch.hpp>

namespace qrm::kube {
namespace {

using Catch::Matchers::Contains;

TEST_CASE("a list page gives each item's key version and JSON with the continue token") {
  StatusOr<ListPage> page = ParseListPage(
      R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"77","continue":"c1"},)"
      R"("items":[{"metadata":{"name":"a","namespace":"ns","resourceVersion":"70"},"spec":{}},)"
      R"({"metadata":{"name":"n1","resourceVersion":"71"}}]})");
  REQUIRE(page.ok());
  CHECK(page->resource_version == "77");
  CHECK(page->continue_token == "c1");
  REQUIRE(page->items.size() == 2);
  CHECK(page->items[0].id.key == "ns/a");
  CHECK(page->items[0].id.resource_version == "70");
  CHECK(page->items[0].json ==
        R"({"metadata":{"name":"a","namespace":"ns","resourceVersion":"70"},"spec":{}})");
  CHECK(page->items[1].id.key == "n1");
}

TEST_CASE("an empty list may carry null items") {
  StatusOr<ListPage> page = ParseListPage(R"({"metadata":{"resourceVersion":"5"},"items":null})");
  REQUIRE(page.ok());
  CHECK(page->items.empty());
  CHECK(page->resource_version == "5");
}

TEST_CASE("a bad list names the item and the field") {
  CHECK_THAT(
      ParseListPage(R"({"items":[{"metadata":{"name":"a"}},{"metadata":{}}]})").status().message(),
      Contains("list.items[1].metadata.name: missing"));
  CHECK_THAT(ParseListPage(R"({"items":[{"metadata":{"name":7}}]})").status().message(),
             Contains("list.items[0].metadata.name: not a string"));
  CHECK_THAT(ParseListPage(R"({"items":{}})").status().message(),
             Contains("list.items: not an array"));
  CHECK_FALSE(ParseListPage("not json").ok());
}

TEST_CASE("watch events of every type parse") {
  StatusOr<WatchEvent> added = ParseWatchEvent(
      R"({"type":"ADDED","object":{"metadata":{"name":"p","namespace":"d","resourceVersion":"9"}}})");
  REQUIRE(added.ok());
  CHECK(added->type == WatchEventType::kAdded);
  CHECK(added->id.key == "d/p");
  CHECK(added->id.resource_version == "9");
  StatusOr<WatchEvent> deleted = ParseWatchEvent(
      R"({"type":"DELETED","object":{"metadata":{"name":"n","resourceVersion":"10"}}})");
  REQUIRE(deleted.ok());
  CHECK(deleted->type == WatchEventType::kDeleted);
  StatusOr<WatchEvent> bookmark = ParseWatchEvent(
      R"({"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"12"}}})");
  REQUIRE(bookmark.ok());
  CHECK(bookmark->type == WatchEventType::kBookmark);
  CHECK(bookmark->id.resource_version == "12");
  StatusOr<WatchEvent> error = ParseWatchEvent(
      R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure",)"
      R"j("message":"too old resource version: 5 (9)","reason":"Expired","code":410}})j");
  REQUIRE(error.ok());
  CHECK(error->type == WatchEventType::kError);
  REQUIRE(error->error.has_value());
  CHECK(error->error->code == 410);
  CHECK(error->error->reason == "Expired");
}

TEST_CASE("bad watch events are refused with what is wrong") {
  CHECK_THAT(ParseWatchEvent(R"({"type":"CHANGED","object":{}})").status().message(),
             Contains("\"CHANGED\""));
  CHECK_THAT(ParseWatchEvent(R"({"type":"ADDED"})").status().message(),
             Contains("object: missing"));
  CHECK_THAT(ParseWatchEvent(R"({"type":"ADDED","object":{"metadata":{}}})").status().message(),
             Contains("watch event ADDED.object.metadata.name: missing"));
  CHECK_THAT(ParseWatchEvent(R"({"type":"ERROR","object":{"kind":"Pod"}})").status().message(),
             Contains("not a Status"));
  CHECK_FALSE(ParseWatchEvent("{").ok());
}

TEST_CASE("the line splitter joins pieces split anywhere and drops blank lines") {
  LineSplitter splitter;
  StatusOr<std::vector<std::string>> first = splitter.Feed("{\"a\":1}\n{\"b\"");
  REQUIRE(first.ok());
  CHECK(*first == std::vector<std::string>{"{\"a\":1}"});
  StatusOr<std::vector<std::string>> second = splitter.Feed(":2}\n\n{\"c\":3}\r\n");
  REQUIRE(second.ok());
  REQUIRE(second->size() == 2);
  CHECK((*second)[0] == "{\"b\":2}");
  CHECK((*second)[1] == "{\"c\":3}\r");
  LineSplitter small(8);
  CHECK(small.Feed("0123456789").status().code() == StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace qrm::kube

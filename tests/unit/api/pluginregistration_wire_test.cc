// Golden-bytes tests for api/pluginregistration_v1.proto (package pluginregistration).
// tag = (field_number << 3) | wire_type.

#include <catch2/catch.hpp>

#include "api/pluginregistration_v1.grpc.pb.h"
#include "api/pluginregistration_v1.pb.h"
#include "tests/unit/api/wire_util.h"

using qrm::test::Serialize;
using qrm::test::ToHex;
using qrm::test::Wire;

TEST_CASE("pluginregistration PluginInfo", "[api][pluginregistration]") {
  pluginregistration::PluginInfo info;
  info.set_type("ResourcePlugin");
  info.set_name("cpu");
  info.set_endpoint("cpu.sock");
  info.add_supported_versions("v1alpha1");
  info.add_supported_versions("v1beta1");

  const std::string golden = Wire(
      "0a 0e 'ResourcePlugin'"  // field 1 (type)
      "12 03 'cpu'"             // field 2 (name)
      "1a 08 'cpu.sock'"        // field 3 (endpoint)
      // field 4 (supported_versions): repeated string, one tag 0x22 per element (never packed)
      "22 08 'v1alpha1'  22 07 'v1beta1'");
  CHECK(ToHex(Serialize(info)) == ToHex(golden));

  pluginregistration::PluginInfo parsed;
  REQUIRE(parsed.ParseFromString(golden));
  CHECK(parsed.type() == "ResourcePlugin");
  CHECK(parsed.name() == "cpu");
  CHECK(parsed.endpoint() == "cpu.sock");
  REQUIRE(parsed.supported_versions_size() == 2);
  CHECK(parsed.supported_versions(0) == "v1alpha1");
  CHECK(parsed.supported_versions(1) == "v1beta1");
}

TEST_CASE("pluginregistration RegistrationStatus failure", "[api][pluginregistration]") {
  pluginregistration::RegistrationStatus status;
  status.set_plugin_registered(false);
  status.set_error("version mismatch");

  // plugin_registered(1) false is the proto3 default and is not written.
  const std::string golden = Wire("12 10 'version mismatch'");  // field 2 (error), 16 bytes
  CHECK(ToHex(Serialize(status)) == ToHex(golden));

  pluginregistration::RegistrationStatus parsed;
  REQUIRE(parsed.ParseFromString(golden));
  CHECK_FALSE(parsed.plugin_registered());
  CHECK(parsed.error() == "version mismatch");
}

TEST_CASE("pluginregistration RegistrationStatus success", "[api][pluginregistration]") {
  pluginregistration::RegistrationStatus status;
  status.set_plugin_registered(true);

  const std::string golden = Wire("08 01");  // field 1 (plugin_registered) varint true
  CHECK(ToHex(Serialize(status)) == ToHex(golden));

  pluginregistration::RegistrationStatus parsed;
  REQUIRE(parsed.ParseFromString(golden));
  CHECK(parsed.plugin_registered());
  CHECK(parsed.error().empty());
}

TEST_CASE("pluginregistration empty messages", "[api][pluginregistration]") {
  CHECK(Serialize(pluginregistration::InfoRequest()).empty());
  CHECK(Serialize(pluginregistration::RegistrationStatusResponse()).empty());

  // A newer kubelet's extra field in InfoRequest parses and is kept as unknown.
  pluginregistration::InfoRequest req;
  REQUIRE(req.ParseFromString(Wire("08 01")));
  CHECK(ToHex(Serialize(req)) == "08 01");
}

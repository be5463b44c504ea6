// DecodeError names what does not decode; LenientParse keeps what does.
#include "cri-shim/lenient_decode.h"

#include <catch2/catch.hpp>

#include "api/cri_runtime_v1.pb.h"

namespace qrm::shim {
namespace {

namespace cri = ::runtime::v1;

grpc::ByteBuffer Buffer(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

// A CreateContainerRequest whose container name is not UTF-8, with a readable sandbox.
std::string BadName() {
  cri::CreateContainerRequest request;
  request.set_pod_sandbox_id("sb1");
  request.mutable_sandbox_config()->mutable_metadata()->set_uid("u1");
  request.mutable_sandbox_config()->mutable_metadata()->set_namespace_("ns");
  request.mutable_config()->mutable_metadata()->set_name("NAME");
  request.mutable_config()->set_working_dir("/w");
  auto* env = request.mutable_config()->add_envs();
  env->set_key("K");
  env->set_value("v");
  std::string bytes = request.SerializeAsString();
  bytes[bytes.find("NAME")] = '\xff';
  return bytes;
}

TEST_CASE("DecodeError names the first field that is not valid", "[cri_shim][decode]") {
  const auto& type = *cri::CreateContainerRequest::descriptor();
  CHECK(DecodeError(type, Buffer(BadName())) == "config.metadata.name: string is not valid UTF-8");

  cri::CreateContainerRequest request;
  (*request.mutable_sandbox_config()->mutable_annotations())["a"] = "b";
  (*request.mutable_sandbox_config()->mutable_annotations())["c"] = "DD";
  std::string bytes = request.SerializeAsString();
  bytes[bytes.find("DD")] = '\xc3';
  // Map entries are encoded in no fixed order: the index is whichever "c" landed at.
  const std::string error = DecodeError(type, Buffer(bytes));
  CHECK((error == "sandbox_config.annotations[0].value: string is not valid UTF-8" ||
         error == "sandbox_config.annotations[1].value: string is not valid UTF-8"));

  CHECK(DecodeError(type, Buffer(std::string("\x0a\x10short", 7))) ==
        "malformed protobuf wire format (7 bytes)");
  CHECK(DecodeError(type, grpc::ByteBuffer()) == "no request message");
}

TEST_CASE("LenientParse keeps every field that decodes", "[cri_shim][decode]") {
  cri::CreateContainerRequest partial;
  REQUIRE(LenientParse(Buffer(BadName()), &partial));
  CHECK(partial.pod_sandbox_id() == "sb1");
  CHECK(partial.sandbox_config().metadata().uid() == "u1");
  CHECK(partial.sandbox_config().metadata().namespace_() == "ns");
  CHECK(partial.config().working_dir() == "/w");  // the bad name's siblings survive
  REQUIRE(partial.config().envs_size() == 1);
  CHECK(partial.config().envs(0).value() == "v");
  CHECK(partial.config().metadata().name().empty());  // the bad value is dropped

  cri::CreateContainerRequest untouched;
  CHECK_FALSE(LenientParse(Buffer(std::string("\x0a\x10short", 7)), &untouched));
  CHECK_FALSE(LenientParse(grpc::ByteBuffer(), &untouched));
  CHECK(untouched.ByteSizeLong() == 0);
}

}  // namespace
}  // namespace qrm::shim

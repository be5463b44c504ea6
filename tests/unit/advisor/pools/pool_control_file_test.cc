#include "advisor/pools/pool_control_file.h"

#include <catch2/catch.hpp>
#include <sys/stat.h>

#include "testing/temp_dir.h"

namespace qrm::advisor {
namespace {

TEST_CASE("the advisor writes the shared size atomically and reads it back") {
  testing::TempDir dir;
  const std::string path = dir.File("pools.json");
  REQUIRE(WriteSharedPoolSize(path, 7, 8).ok());
  CHECK(testing::ReadFile(path) == "{\"shared\":7}\n");
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0644);
  auto read = ReadPoolControl(path);
  REQUIRE(read.ok());
  CHECK(read->shared == 7);
  CHECK_FALSE(read->reclaimed.has_value());
  CHECK_FALSE(WriteSharedPoolSize(path, 0, 8).ok());
  CHECK(testing::ReadFile(path) == "{\"shared\":7}\n");
  // The whole pool: the plugin's way to say so is an empty reclaimed pool.
  REQUIRE(WriteSharedPoolSize(path, 8, 8).ok());
  CHECK(testing::ReadFile(path) == "{\"reclaimed\":0}\n");
}

TEST_CASE("the pool control file as an operator or the plugin's --set-pools wrote it") {
  testing::TempDir dir;
  const std::string path = dir.File("pools.json");
  CHECK(ReadPoolControl(path).status().code() == StatusCode::kNotFound);
  testing::WriteFile(path, R"({"reclaimed": 52})");
  auto r = ReadPoolControl(path);
  REQUIRE(r.ok());
  CHECK(r->reclaimed == 52);
  CHECK_FALSE(r->shared.has_value());
  testing::WriteFile(path, R"({"reclaimed": "auto"})");
  r = ReadPoolControl(path);
  REQUIRE(r.ok());
  CHECK_FALSE(r->reclaimed.has_value());
  testing::WriteFile(path, R"({"shared": 2.5})");
  r = ReadPoolControl(path);
  CHECK(r.status().code() == StatusCode::kDataLoss);
  CHECK(r.status().message().find("shared: invalid value 2.5") != std::string::npos);
  testing::WriteFile(path, R"({"shared": 4, "reclaim": 2})");  // the plugin refuses it too
  r = ReadPoolControl(path);
  CHECK(r.status().code() == StatusCode::kDataLoss);
  CHECK(r.status().message().find("unknown key \"reclaim\"") != std::string::npos);
  testing::WriteFile(path, "[1]");
  CHECK(ReadPoolControl(path).status().code() == StatusCode::kDataLoss);
}

}  // namespace
}  // namespace qrm::advisor

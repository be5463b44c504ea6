// Shared fixtures for the checkpoint tests.
#pragma once

#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <dirent.h>

#include "checkpoint/checkpoint_file.h"

namespace qrm::checkpoint::testutil {

inline rapidjson::Document Json(const char* text) {
  rapidjson::Document doc;
  doc.Parse(text);
  REQUIRE_FALSE(doc.HasParseError());
  return doc;
}

inline std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  REQUIRE(d != nullptr);
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(d);
  return names;
}

// The value at data["n"] of a checkpoint holding {"n": <int>}.
inline int64_t ReadN(const std::string& path) {
  auto cp = Read(path);
  REQUIRE(cp.ok());
  return cp->data["n"].GetInt64();
}

}  // namespace qrm::checkpoint::testutil

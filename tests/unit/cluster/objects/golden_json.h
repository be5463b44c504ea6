// The golden files of the object tests (golden/README.md) and the form they are compared in.
#pragma once

#include <string>

#include <catch2/catch.hpp>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "testing/temp_dir.h"

namespace qrm::cluster {

inline std::string Golden(const std::string& name) {
  return testing::ReadFile(std::string(QRM_GOLDEN_DIR) + "/" + name);
}

// The document as json.Marshal writes it: compact, members in the file's order.
inline std::string Compact(const std::string& text) {
  rapidjson::Document doc;
  doc.Parse(text.c_str());
  REQUIRE_FALSE(doc.HasParseError());
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  doc.Accept(w);
  return buffer.GetString();
}

}  // namespace qrm::cluster

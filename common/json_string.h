// The whole of a JSON string value. RapidJSON's GetString() is NUL-terminated, so a value
// like "true\u0000junk" would read as "true"; every string qrm takes from JSON goes through
// here so that such a value is compared, parsed and reported in full.
#pragma once

#include <string>
#include <string_view>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace qrm {

// `v` must be a string (or an object member name).
inline std::string_view JsonStringView(const rapidjson::Value& v) {
  return {v.GetString(), v.GetStringLength()};
}

inline std::string JsonString(const rapidjson::Value& v) {
  return std::string(JsonStringView(v));
}

// Any value as compact JSON text: for error messages that show what was found, and to hand
// one object of a larger document to a decoder that reads whole documents.
inline std::string JsonText(const rapidjson::Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  v.Accept(w);
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace qrm

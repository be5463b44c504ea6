// Helpers for the golden-bytes tests: expected encodings are written by hand as hex with
// quoted ASCII runs, e.g. Wire("0a 03 'sb1'") is the bytes 0a 03 73 62 31.
#pragma once

#include <cctype>
#include <stdexcept>
#include <string>
#include <string_view>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/message_lite.h>

namespace qrm::test {

// Parses whitespace-separated hex byte pairs; text between single quotes is taken verbatim.
inline std::string Wire(std::string_view spec) {
  std::string out;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    throw std::invalid_argument("bad hex digit");
  };
  for (size_t i = 0; i < spec.size();) {
    char c = spec[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '\'') {
      size_t end = spec.find('\'', i + 1);
      if (end == std::string_view::npos) throw std::invalid_argument("unterminated quote");
      out.append(spec.substr(i + 1, end - i - 1));
      i = end + 1;
    } else {
      if (i + 1 >= spec.size()) throw std::invalid_argument("odd hex digit count");
      out.push_back(static_cast<char>(nibble(c) * 16 + nibble(spec[i + 1])));
      i += 2;
    }
  }
  return out;
}

// Lower-case hex, one space between bytes, so Catch prints readable diffs.
inline std::string ToHex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    if (!out.empty()) out.push_back(' ');
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 0xf]);
  }
  return out;
}

// Deterministic serialization (map entries sorted by key), as used for the golden bytes.
inline std::string Serialize(const google::protobuf::MessageLite& msg) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    if (!msg.SerializeToCodedStream(&coded)) throw std::runtime_error("serialize failed");
  }
  return out;
}

}  // namespace qrm::test

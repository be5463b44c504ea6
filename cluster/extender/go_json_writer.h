// Writing JSON byte for byte as Go's json.Marshal writes it (Go 1.22 and later), so that what
// we answer kube-scheduler is what a Go extender built on the upstream types would answer:
// compact, fields in the order the caller writes them (the Go struct's), and strings escaped
// the Go way: \" \\ \b \f \n \r \t, other control characters and < > & as \u00XX with lower-case
// hex, U+2028 and U+2029 as \u2028 and \u2029, and each byte that is not valid UTF-8 as \ufffd.
// (RapidJSON's writer escapes differently, hence this small writer.)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace qrm::extender {

class GoJsonWriter {
 public:
  void BeginObject();
  void EndObject();
  void BeginArray();
  void EndArray();
  void Key(std::string_view key);
  void String(std::string_view s);
  void Int(int64_t v);
  void Bool(bool v);
  void Null();
  // A value that is already JSON text (a number as written, a node as received).
  void Raw(std::string_view json);

  std::string Take() { return std::move(out_); }

 private:
  void BeforeValue();

  std::string out_;
  std::vector<bool> has_items_;  // for each open object or array: whether it has an item yet
  bool after_key_ = false;
};

// `s` as a JSON string literal, quotes included, escaped as above.
std::string GoJsonQuote(std::string_view s);

}  // namespace qrm::extender

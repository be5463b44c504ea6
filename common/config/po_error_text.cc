#include "common/config/po_error_text.h"

#include <map>

namespace qrm::config {
namespace po = boost::program_options;
namespace {

// A copy of the error, to reach the template and substitutions Boost keeps protected.
class OnePassMessage : public po::error_with_option_name {
 public:
  explicit OnePassMessage(const po::error_with_option_name& e) : po::error_with_option_name(e) {}

  std::string Format() const {
    // The same substitutions Boost makes (error_with_option_name::substitute_placeholders).
    std::map<std::string, std::string> values(m_substitutions);
    values["canonical_option"] = get_canonical_option_name();
    values["prefix"] = get_canonical_option_prefix();
    std::string text = m_error_template;
    for (const auto& [name, from_to] : m_substitution_defaults) {
      if (values[name].empty()) text = ReplaceOnce(text, from_to.first, from_to.second);
    }
    // "%name%" tokens, left to right; what replaces one is copied, never scanned.
    std::string out;
    for (size_t i = 0; i < text.size();) {
      if (text[i] == '%') {
        const size_t end = text.find('%', i + 1);
        if (end != std::string::npos) {
          const auto it = values.find(text.substr(i + 1, end - i - 1));
          if (it != values.end()) {
            out += it->second;
            i = end + 1;
            continue;
          }
        }
      }
      out += text[i++];
    }
    return out;
  }

 private:
  // Every occurrence of `from` in `text` replaced by `to`, in one pass.
  static std::string ReplaceOnce(const std::string& text, const std::string& from,
                                 const std::string& to) {
    if (from.empty()) return text;
    std::string out;
    size_t start = 0;
    for (size_t pos; (pos = text.find(from, start)) != std::string::npos;
         start = pos + from.size()) {
      out.append(text, start, pos - start);
      out += to;
    }
    out.append(text, start, std::string::npos);
    return out;
  }
};

}  // namespace

std::string PoErrorText(const po::error& e) {
  // ambiguous_option appends its alternatives in its own what(); the placeholders it fills
  // are option names from the description and the token that matched several of them.
  if (dynamic_cast<const po::ambiguous_option*>(&e) == nullptr) {
    if (const auto* named = dynamic_cast<const po::error_with_option_name*>(&e)) {
      return OnePassMessage(*named).Format();
    }
  }
  return e.what();
}

}  // namespace qrm::config

#include "cluster/scheduler/args_document.h"

#include <string>
#include <vector>

#include <fmt/format.h>

#include "cluster/extender/go_json_reader.h"
#include "common/quote.h"

namespace qrm::cluster::scheduler {
namespace {

using kube::DocNode;

Status FromJson(const extender::JsonDocument& doc, const extender::JsonValue& v, DocNode& out) {
  if (v.IsObject()) {
    out.kind = DocNode::Kind::kMap;
    for (const auto& m : v.GetObject()) {
      std::string key(m.name.GetString(), m.name.GetStringLength());
      if (out.Find(key)) return InvalidArgumentError(fmt::format("{}: given twice", key));
      DocNode value;
      if (Status s = FromJson(doc, m.value, value); !s.ok()) return s.WithContext(key);
      out.entries.push_back(kube::DocEntry{std::move(key), std::move(value)});
    }
  } else if (v.IsArray()) {
    out.kind = DocNode::Kind::kSeq;
    for (const auto& item : v.GetArray()) {
      QRM_RETURN_IF_ERROR(FromJson(doc, item, out.items.emplace_back()));
    }
  } else if (v.IsString()) {  // numbers too, as written
    out.kind = DocNode::Kind::kScalar;
    out.scalar.assign(v.GetString(), v.GetStringLength());
    out.quoted = !doc.IsNumber(v);
  } else if (v.IsBool()) {
    out.kind = DocNode::Kind::kScalar;
    out.scalar = v.GetBool() ? "true" : "false";
  }
  return Status::Ok();
}

std::string_view TrimLeft(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '-')) s.remove_prefix(1);
  return s;
}

// The nearest line at or before `line` (1-based) that starts the entry `key`.
int KeyLine(const std::vector<std::string_view>& lines, const std::string& key, int line) {
  for (int n = std::min<int>(line, static_cast<int>(lines.size())); n >= 1; --n) {
    const std::string_view s = TrimLeft(lines[n - 1]);
    for (const std::string& form : {key + ":", Quote(key) + ":", "'" + key + "':"}) {
      if (s.substr(0, form.size()) == form) return n;
    }
  }
  return line;
}

void PointAtKeys(const std::vector<std::string_view>& lines, DocNode& node) {
  for (kube::DocEntry& e : node.entries) {
    if (e.value.kind == DocNode::Kind::kMap || e.value.kind == DocNode::Kind::kSeq) {
      e.value.line = KeyLine(lines, e.key, e.value.line);
    }
    PointAtKeys(lines, e.value);
  }
  for (DocNode& item : node.items) PointAtKeys(lines, item);
}

}  // namespace

StatusOr<DocNode> ParseArgsDocument(std::string_view text) {
  const size_t start = text.find_first_not_of(" \t\r\n");
  if (start != std::string_view::npos && text[start] == '{') {
    extender::JsonDocument doc;
    QRM_RETURN_IF_ERROR(doc.Parse(text));
    DocNode root;
    QRM_RETURN_IF_ERROR(FromJson(doc, doc.root(), root));
    return root;
  }
  StatusOr<DocNode> root = kube::ParseYaml(text);
  if (!root.ok()) return root.status();
  std::vector<std::string_view> lines;
  for (size_t pos = 0; pos <= text.size();) {
    const size_t end = std::min(text.find('\n', pos), text.size());
    lines.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  PointAtKeys(lines, *root);
  return root;
}

}  // namespace qrm::cluster::scheduler

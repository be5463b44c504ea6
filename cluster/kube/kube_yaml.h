// A strict reader for the YAML that kubectl writes (kubeconfig files), and for JSON.
//
// There is no YAML library on the platform, and a kubeconfig needs only a small part of YAML:
// block mappings, block sequences whose items start with "- " (at the key's indentation, as
// kubectl writes them, or indented), plain, 'single-quoted' and "double-quoted" scalars (which
// may continue on more indented lines, as kubectl folds long values), comments, the empty flow
// collections {} and [], and an optional "---" first line. Everything else (anchors, aliases,
// tags, block scalars | and >, non-empty flow collections, complex keys, directives, several
// documents, tabs in indentation, duplicate keys) is refused with an error naming its line and
// column, rather than read in a way kubectl would not.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace qrm::kube {

struct DocEntry;

struct DocNode {
  enum class Kind { kNull, kScalar, kMap, kSeq };

  Kind kind = Kind::kNull;
  std::string scalar;             // kScalar: the value, quotes and escapes resolved
  bool quoted = false;            // kScalar: written in quotes (so "true" is text, not a boolean)
  std::vector<DocEntry> entries;  // kMap, in file order, keys unique
  std::vector<DocNode> items;     // kSeq
  int line = 0;                   // where the node starts (1-based), for messages
  int column = 0;

  // The value of `key` in a mapping, or nullptr (also when this is not a mapping).
  const DocNode* Find(std::string_view key) const;
};

struct DocEntry {
  std::string key;
  DocNode value;
};

// What a node is, for messages: "a mapping", "a sequence", "a string", "null".
std::string_view KindName(DocNode::Kind kind);

// The YAML subset above. Errors are kInvalidArgument: "line L column C: what".
StatusOr<DocNode> ParseYaml(std::string_view text);

// A JSON document (kubeconfigs may be JSON). Numbers, booleans and strings become scalars
// (strings quoted); errors are kInvalidArgument naming line and column.
StatusOr<DocNode> ParseJson(std::string_view text);

// JSON when the first character that is not blank is '{', the YAML subset otherwise.
StatusOr<DocNode> ParseYamlOrJson(std::string_view text);

// The tree as compact JSON (scalars as strings, null as null); ParseJson reads it back to the
// same tree.
std::string ToJson(const DocNode& node);

}  // namespace qrm::kube

// The document tree of an arguments file (kube::DocNode), with what strict decoding needs that
// kube::ParseYamlOrJson does not give: JSON numbers and booleans as plain (unquoted) scalars, so
// a quoted "180" is a string there as in YAML, and every mapping or sequence value placed on
// the line of its key, so an error names the line the user wrote the field on.
#pragma once

#include <string_view>

#include "cluster/kube/kube_yaml.h"
#include "common/status.h"

namespace qrm::cluster::scheduler {

// JSON when the first character that is not blank is '{' (its nodes have line 0: JSON errors
// name the field path only; a key given twice is refused), the YAML subset of kube_yaml.h
// otherwise.
StatusOr<kube::DocNode> ParseArgsDocument(std::string_view text);

}  // namespace qrm::cluster::scheduler

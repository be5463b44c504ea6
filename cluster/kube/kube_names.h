// Names that go into API paths, checked before use: a name is never put into a URL unchecked
// (a "/" or "?" in it would address another object).
#pragma once

#include <string_view>

#include "common/status.h"

namespace qrm::kube {

// apimachinery's IsDNS1123Label: 1..63 of [a-z0-9-], starting and ending alphanumeric.
bool IsDnsLabel(std::string_view name);
// apimachinery's IsDNS1123Subdomain: 1..253 of [a-z0-9.-], each dot-separated part starting
// and ending alphanumeric. Like upstream, a part may be longer than a label's 63.
bool IsDnsSubdomain(std::string_view name);

// A namespace: a DNS-1123 label (1..63 of [a-z0-9-], starting and ending alphanumeric).
// kInvalidArgument naming `field` and the value otherwise.
Status ValidateNamespace(std::string_view name, std::string_view field = "namespace");

// A pod (or most objects') name: a DNS-1123 subdomain (1..253 of [a-z0-9.-], each dot-separated
// part starting and ending alphanumeric).
Status ValidateObjectName(std::string_view name, std::string_view field = "name");

}  // namespace qrm::kube

// The JSON `data` of the host checkpoint <-> PodResources (format in README.md).
// Separate from StateStore so the format can be tested and reused (qrmctl) without files.
#pragma once

#include <rapidjson/document.h>

#include "common/status.h"
#include "qrm/state/pod_resources.h"

namespace qrm::host {

// Fills `out` (made an object) with the checkpoint data of `state`. kInternal only if a
// protobuf message cannot be serialized (over 2 GiB).
Status EncodePodResources(const PodResources& state, rapidjson::Document& out);

// Parses checkpoint data. The file's checksum already matched, so anything wrong here was
// written that way by a buggy qrm: kDataLoss with a message naming the JSON location and
// the pod/container/resource (e.g. pods["u1"].containers["c"].resources["cpu"]). Unknown
// members are refused too: a newer writer that adds members must bump the version, or an
// older reader would silently drop them on its next write.
StatusOr<PodResources> DecodePodResources(const rapidjson::Value& data);

}  // namespace qrm::host

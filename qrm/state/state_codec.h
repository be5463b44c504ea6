// The JSON `data` of one pod's checkpoint file <-> PodAllocation (format in README.md).
// Separate from StateStore so the format can be tested and reused (qrmctl) without files.
#pragma once

#include <string>

#include <rapidjson/document.h>

#include "common/status.h"
#include "qrm/state/pod_resources.h"

namespace qrm::state {

// Fills `out` (made an object) with the checkpoint data of `pod`. Allocation infos are
// taken from the container's resource_bytes cache when it has them. kInternal only if a
// protobuf message cannot be serialized (over 2 GiB).
Status EncodePod(const PodAllocation& pod, rapidjson::Document& out);

// Parses one pod's checkpoint data. The file's checksum already matched, so anything wrong
// here was written that way by a buggy qrm: kDataLoss with a message naming the JSON
// location and the container/resource (e.g. pod.containers["c"].resources["cpu"]).
// Unknown members are refused too: a newer writer that adds members must bump the
// version, or an older reader would silently drop them on its next write. The result's
// resource_bytes caches are left empty.
StatusOr<PodAllocation> DecodePod(const rapidjson::Value& data);

// The host journal's record of pod `uid`'s new value ({"op":"put","pod":<EncodePod data>}), or
// of its removal when `pod` is null ({"op":"remove_pod","pod_uid":uid}).
StatusOr<rapidjson::Document> EncodePodRecord(const std::string& uid, const PodAllocation* pod);

// The uid a host journal record changes, read without decoding the pod (kDataLoss as below).
StatusOr<std::string> PodRecordUid(const rapidjson::Value& record);

// Applies one host journal record to `pods` (with resource_bytes cached) and returns the uid
// it changed. kDataLoss for a record qrm never writes (its checksum matched), naming what is
// wrong; the uid is not checked as a file name (StateStore::ValidatePodUid).
StatusOr<std::string> ApplyPodRecord(const rapidjson::Value& record, PodResources& pods);

}  // namespace qrm::state

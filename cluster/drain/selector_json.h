// Reading and checking what the drain planner's decoders share: an object's metadata, and label
// and node selectors (the matchExpressions of metav1.LabelSelector and core/v1
// NodeSelectorTerm), used by the snapshot decoder (PDBs, node affinity), the pod affinity
// decoder and the volume and storage decoders.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/drain/error_list.h"
#include "cluster/drain/snapshot.h"
#include "cluster/objects/json_io.h"
#include "common/status.h"

namespace qrm::cluster::drain {

// The object's metadata, with `kind` and the item's apiVersion checked; metadata.name must be
// set.
StatusOr<ObjectMeta> ReadNamedMeta(const json::Field& item, std::string_view kind,
                                   std::string_view api_version);

// object.<key>[]: matchExpressions entries; the operators are checked by CheckRequirements.
Status ReadRequirements(const json::Field& object, const char* key,
                        std::vector<SelectorRequirement>* out);
// The NodeSelectorTerms at object.<path...> (nothing when any step is absent): a pod's
// spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms,
// a PersistentVolume's spec.nodeAffinity.required.nodeSelectorTerms.
Status ReadNodeSelectorTerms(const json::Field& object, std::initializer_list<const char*> path,
                             std::vector<NodeSelectorTerm>* out);
// object.<key>: a metav1.LabelSelector, left unset when absent or null.
Status ReadLabelSelector(const json::Field& object, const char* key,
                         std::optional<LabelSelector>* out);

// The checks of metav1.LabelSelector (node_selector false: In, NotIn, Exists, DoesNotExist)
// and core/v1 NodeSelectorRequirement validation (also Gt, Lt). Each error is prefixed
// "<object>: <path>[i]".
void CheckRequirements(const std::vector<SelectorRequirement>& list, bool node_selector,
                       const std::string& path, ErrorList* errors, const std::string& object);

}  // namespace qrm::cluster::drain

// The parts of k8s.io/api core/v1 Pod and Node that a scheduler extender reads (every other
// field of the JSON kube-scheduler sends is skipped, as Go's decoder skips fields a struct does
// not have). Field names in comments are the JSON names of core/v1 types.go; kube_objects_json.h
// reads and writes them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/quantity.h"

namespace qrm::extender {

// core/v1 ResourceList: resource name ("cpu", "memory", "nvidia.com/gpu") -> quantity.
using ResourceList = std::map<std::string, Quantity>;

// metav1.OwnerReference: kind, name, controller (a *bool: nullopt when absent or null).
struct OwnerReference {
  std::string kind;
  std::string name;
  std::optional<bool> controller;
};

// metav1.ObjectMeta: name, namespace, uid, labels, annotations, creationTimestamp,
// ownerReferences.
struct ObjectMeta {
  std::string name;
  std::string namespace_name;
  std::string uid;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::string creation_timestamp;  // RFC 3339 as sent; "" when absent or null
  std::vector<OwnerReference> owner_references;
};

// core/v1 ResourceRequirements: requests, limits.
struct ResourceRequirements {
  ResourceList requests;
  ResourceList limits;
};

// core/v1 Container: name, resources, restartPolicy.
struct Container {
  std::string name;
  ResourceRequirements resources;
  // A *ContainerRestartPolicy: "Always" on an init container makes it a sidecar; nullopt when
  // absent or null.
  std::optional<std::string> restart_policy;
};

// core/v1 PodSpec: nodeName, priority, priorityClassName, containers, initContainers, overhead,
// resources.
struct PodSpec {
  std::string node_name;
  std::optional<int32_t> priority;  // absent or null: not resolved by admission
  std::string priority_class_name;
  std::vector<Container> containers;
  std::vector<Container> init_containers;
  ResourceList overhead;
  // Pod-level resources (a *ResourceRequirements): nullopt when absent or null.
  std::optional<ResourceRequirements> resources;
};

// core/v1 PodCondition: type, status, lastTransitionTime.
struct PodCondition {
  std::string type;                  // PodScheduled, Initialized, Ready, ...
  std::string status;                // True, False, Unknown
  std::string last_transition_time;  // RFC 3339 as sent; "" when absent or null (zero time)
};

// core/v1 PodStatus: phase, conditions, qosClass.
struct PodStatus {
  std::string phase;
  std::vector<PodCondition> conditions;
  std::string qos_class;  // Guaranteed, Burstable, BestEffort or ""
};

struct Pod {
  ObjectMeta metadata;
  PodSpec spec;
  PodStatus status;
};

// core/v1 NodeStatus: capacity, allocatable.
struct NodeStatus {
  ResourceList capacity;
  ResourceList allocatable;
};

struct Node {
  ObjectMeta metadata;
  NodeStatus status;
  // The whole node object as received (compact JSON), written back as it is when the node goes
  // into a NodeList answer: kube-scheduler takes the nodes of a filter answer as the nodes it
  // goes on scheduling with. When set it is what WriteNodeList writes, not the fields above;
  // "" for a node built here (then the fields are written).
  std::string json;
};

// core/v1 NodeList: items (its list metadata is empty in what kube-scheduler sends).
struct NodeList {
  std::vector<Node> items;
};

}  // namespace qrm::extender

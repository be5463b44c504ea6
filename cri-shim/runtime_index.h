// RuntimeIndex: the runtime's ids as the shim has seen them, so that calls naming only an id
// (StartContainer, RemoveContainer, StopPodSandbox, ...) and the reconcile loop (which names
// pod uid + container name) can find each other.
//
//  * sandbox id -> pod (from RunPodSandbox, or the runtime's list at resync) and whether the
//    sandbox is still ready;
//  * container id -> (pod uid, container name, sandbox id) (from CreateContainer responses,
//    or the list at resync), and back: one (pod, name) may have several ids at once when
//    the kubelet restarts a container (the new one is created before the dead one is
//    removed), kept in creation order so the newest is the one to update;
//  * CreateContainer calls in flight per (pod, name), so that a container being created
//    keeps its allocation even when an older container of the same name is removed
//    meanwhile (the kubelet's garbage collector runs beside its pod workers).
//
// Thread-safe; one short internal lock, never held across anything but map operations.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "cri-shim/pod_info.h"

namespace qrm::shim {

struct ContainerKey {
  std::string pod_uid;
  std::string name;
  friend auto operator<=>(const ContainerKey&, const ContainerKey&) = default;
};

class RuntimeIndex {
 public:
  struct Sandbox {
    std::string id;
    PodInfo pod;
    bool ready = true;
  };
  struct Container {
    std::string id;
    std::string sandbox_id;
    ContainerKey key;
  };

  void AddSandbox(const std::string& id, PodInfo pod, bool ready = true);
  std::optional<Sandbox> FindSandbox(const std::string& id) const;
  void MarkSandboxNotReady(const std::string& id);
  // Forgets the sandbox and every container in it (the runtime removes them with it).
  void RemoveSandbox(const std::string& id);
  // Whether the pod has a ready sandbox other than `except_sandbox_id`.
  bool HasOtherReadySandbox(const std::string& pod_uid, const std::string& except_sandbox_id) const;
  // Uids of pods with at least one ready sandbox.
  std::set<std::string> ReadyPodUids() const;

  // A CreateContainer for `key` is sent to the runtime / has returned (`created` then names
  // the new container, or is null if the runtime refused it).
  void BeginCreate(const ContainerKey& key);
  void EndCreate(const ContainerKey& key, const Container* created);
  // Whether some container or a create in flight still uses `key`'s allocation.
  bool InUse(const ContainerKey& key) const;

  // Records a new container (the newest for its key).
  void AddContainer(const Container& container);
  std::optional<Container> FindContainer(const std::string& id) const;
  // Forgets the container; returns its key if nothing else uses it (InUse is false), so its
  // allocation may go.
  std::optional<ContainerKey> RemoveContainer(const std::string& id);
  // The newest container id of (pod, name), if any.
  std::optional<std::string> NewestContainerId(const ContainerKey& key) const;

  // Replaces everything but creates in flight (resync). Containers in creation order.
  void Reset(const std::vector<Sandbox>& sandboxes, const std::vector<Container>& containers);

  size_t sandbox_count() const;
  size_t container_count() const;

 private:
  void AddContainerLocked(const Container& container) QRM_REQUIRES(mu_);
  void RemoveContainerLocked(const std::string& id) QRM_REQUIRES(mu_);

  mutable Mutex mu_;
  std::map<std::string, Sandbox> sandboxes_ QRM_GUARDED_BY(mu_);     // by sandbox id
  std::map<std::string, Container> containers_ QRM_GUARDED_BY(mu_);  // by container id
  std::map<ContainerKey, std::vector<std::string>> ids_by_key_
      QRM_GUARDED_BY(mu_);                                    // creation order
  std::map<ContainerKey, int> creating_ QRM_GUARDED_BY(mu_);  // creates in flight
};

}  // namespace qrm::shim

#include "qrm/reconcile/container_writer.h"

namespace qrm::reconcile {

Status ContainerWriter::WriteCurrent(const std::string& pod_uid, const std::string& container,
                                     const Wanted& wanted, const Written& written) {
  MutexLock lock(mu_);
  StatusOr<apply::ContainerUpdate> update = admission_.CurrentUpdate(pod_uid, container);
  if (!update.ok()) return update.status();
  if (wanted && !wanted(*update)) return Status::Ok();
  QRM_RETURN_IF_ERROR(applier_.Apply(pod_uid, container, *update));
  return written ? written(*update) : Status::Ok();
}

}  // namespace qrm::reconcile

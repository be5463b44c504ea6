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

Status ContainerWriter::WriteRestore(const std::string& pod_uid, const std::string& container,
                                     int64_t quota_us, int64_t period_us) {
  apply::ContainerUpdate update;
  update.resources.set_cpu_quota(quota_us);
  update.resources.set_cpu_period(period_us);
  update.owned.insert(apply::OciProperty::kCpuQuota);
  update.owned.insert(apply::OciProperty::kCpuPeriod);
  MutexLock lock(mu_);
  return applier_.Apply(pod_uid, container, update);
}

}  // namespace qrm::reconcile

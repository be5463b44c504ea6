#include "plugins/cpu/node_sets.h"

namespace qrm::cpu {

bool ForEachNodeSet(const std::vector<int>& nodes, int width, int* budget,
                    const std::function<bool(NumaMask)>& visit) {
  const int n = static_cast<int>(nodes.size());
  if (width > n) return true;
  std::vector<int> index(width);
  for (int i = 0; i < width; ++i) index[i] = i;
  while (true) {
    if (--*budget < 0) return false;
    NumaMask mask;
    for (int i : index) mask = mask.With(nodes[i]);
    if (!visit(mask)) return false;
    int i = width - 1;
    while (i >= 0 && index[i] == n - width + i) --i;
    if (i < 0) return true;
    ++index[i];
    for (int j = i + 1; j < width; ++j) index[j] = index[j - 1] + 1;
  }
}

}  // namespace qrm::cpu

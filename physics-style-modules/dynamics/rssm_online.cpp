#include "physics-style-modules/dynamics/rssm_online.hpp"

#include <string>

namespace hpt {

RssmTrainOptions rssm_train_options_from_config(const Config& config) {
  RssmTrainOptions o;
  o.bptt = static_cast<int>(config.get_int("dynamics.bptt"));
  o.lr = config.get_real("dynamics.lr");
  o.kl_weight = config.get_real("dynamics.kl_weight");
  o.clip_norm = config.get_real("dynamics.clip_norm");
  o.seed = static_cast<std::uint64_t>(config.get_int("dynamics.seed"));
  const std::string& recurrence = config.get_string("dynamics.bptt_recurrence");
  o.recurrence = recurrence == "team"    ? BpttRecurrence::Team
                 : recurrence == "split" ? BpttRecurrence::Split
                                         : BpttRecurrence::Auto;
  return o;
}

template class RssmOnline<ExecSpace, real>;

}  // namespace hpt

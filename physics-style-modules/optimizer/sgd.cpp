#include "physics-style-modules/optimizer/sgd.hpp"

#include <sstream>

namespace hpt {

namespace {
std::string num(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}
}  // namespace

std::string describe_sgd(const SgdOptions& o) {
  return "sgd momentum " + num(o.momentum) + (o.nesterov ? " nesterov" : "") + ", weight decay " +
         num(o.weight_decay) + ", clip " + num(o.clip_norm);
}

void validate_sgd_options(const SgdOptions& o) {
  if (o.nesterov && o.momentum <= 0.0)
    throw InputError("optimizer.nesterov = true needs optimizer.momentum > 0 (it is " +
                     num(o.momentum) + ")");
  if (o.momentum < 0.0 || o.momentum >= 1.0)
    throw InputError("optimizer.momentum = " + num(o.momentum) +
                     " is out of range; expected a value in [0, 1)");
  if (o.weight_decay < 0.0)
    throw InputError("optimizer.weight_decay = " + num(o.weight_decay) +
                     " is negative; expected a value >= 0");
}

SgdOptions sgd_options_from_config(const Config& config) {
  SgdOptions o;
  o.momentum = config.get_real("optimizer.momentum");
  o.nesterov = config.get_bool("optimizer.nesterov");
  o.weight_decay = config.get_real("optimizer.weight_decay");
  o.clip_norm = config.get_real("optimizer.clip_norm");
  validate_sgd_options(o);
  return o;
}

template class Sgd<ExecSpace, real>;

}  // namespace hpt

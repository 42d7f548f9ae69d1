#include "physics-style-modules/optimizer/adam.hpp"

#include <sstream>

namespace hpt {

namespace {
std::string num(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}
}  // namespace

std::string describe_adam(const AdamOptions& o) {
  return "adamw beta1 " + num(o.beta1) + ", beta2 " + num(o.beta2) + ", eps " + num(o.eps) +
         ", weight decay " + num(o.weight_decay) + ", clip " + num(o.clip_norm);
}

void validate_adam_options(const AdamOptions& o) {
  const auto in_unit = [](double b) { return b >= 0.0 && b < 1.0; };
  if (!in_unit(o.beta1))
    throw InputError("optimizer.beta1 = " + num(o.beta1) +
                     " is out of range; expected a value in [0, 1)");
  if (!in_unit(o.beta2))
    throw InputError("optimizer.beta2 = " + num(o.beta2) +
                     " is out of range; expected a value in [0, 1)");
  if (!(o.eps > 0.0)) throw InputError("optimizer.eps = " + num(o.eps) + " must be > 0");
  if (o.weight_decay < 0.0)
    throw InputError("optimizer.weight_decay = " + num(o.weight_decay) +
                     " is negative; expected a value >= 0");
}

AdamOptions adam_options_from_config(const Config& config) {
  AdamOptions o;
  o.beta1 = config.get_real("optimizer.beta1");
  o.beta2 = config.get_real("optimizer.beta2");
  o.eps = config.get_real("optimizer.eps");
  o.weight_decay = config.get_real("optimizer.weight_decay");
  o.clip_norm = config.get_real("optimizer.clip_norm");
  validate_adam_options(o);
  return o;
}

template class Adam<ExecSpace, real>;

}  // namespace hpt

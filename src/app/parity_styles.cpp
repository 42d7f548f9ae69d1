#include "app/parity_styles.hpp"

#include "core/error.hpp"

namespace hpt::app {

void check_parity_styles(const Config& c, const std::string& mode) {
  const bool trains = mode == "train" || mode == "compare";
  const bool prototype = trains && c.get_string("train.hybrid") == "on" &&
                         c.get_string("hybrid.controller") == "prototype";
  if (!prototype) {
    if (c.get_string("dynamics.style") == "rssm_prototype")
      throw InputError(
          "dynamics.style = 'rssm_prototype' (the prototype's RSSM) serves only the "
          "prototype's controller: set train.hybrid = on and hybrid.controller = "
          "prototype in a train or compare run, or use dynamics.style = rssm");
    return;
  }
  const struct {
    const char* key;
    const char* value;
  } needed[] = {{"dynamics.style", "rssm_prototype"},
                {"encoder.style", "prototype"},
                {"gru.reset", "before"},
                {"update.style", "none"}};
  for (const auto& n : needed)
    if (c.get_string(n.key) != n.value)
      throw InputError(
          std::string(n.key) + " = '" + c.get_string(n.key) +
          "', but hybrid.controller = prototype needs " + n.key + " = " + n.value +
          " (the prototype's styles; its predicted updates never reached the weights)");
}

}  // namespace hpt::app

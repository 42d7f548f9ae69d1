#include "physics-style-modules/model/mlp.hpp"

#include <cerrno>
#include <cstdlib>

namespace hpt {

namespace {

constexpr long kMaxLayerSize = 1L << 24;

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

}  // namespace

std::vector<int> parse_layer_sizes(const std::string& text, const std::string& key) {
  const auto bad = [&](const std::string& why) {
    return InputError(key + " = '" + text + "' " + why +
                      "; expected at least two positive integers separated by commas (input, "
                      "hidden..., output), e.g. '64,128,10'");
  };
  std::vector<int> sizes;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string token =
        trim(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(token.c_str(), &end, 10);
    if (token.empty() || *end != '\0' || errno == ERANGE)
      throw bad("has '" + token + "', which is not an integer");
    if (v < 1 || v > kMaxLayerSize)
      throw bad("has the size " + token + ", outside [1, " + std::to_string(kMaxLayerSize) + "]");
    sizes.push_back(int(v));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (sizes.size() < 2) throw bad("has fewer than two sizes");
  return sizes;
}

void validate_mlp_options(const MlpOptions& options) {
  if (options.layers.size() < 2)
    throw InputError("model.layers: an mlp needs at least an input and an output size");
  for (int s : options.layers)
    if (s < 1) throw InputError("model.layers: every layer size must be positive");
  if (options.loss == LossKind::CrossEntropy && options.layers.back() < 2)
    throw InputError(
        "model.loss = 'cross_entropy' needs at least 2 outputs, but model.layers ends with " +
        std::to_string(options.layers.back()));
  if (options.activation == Activation::Identity && options.layers.size() > 2)
    throw InputError(
        "model.activation = 'identity' for hidden layers; expected relu, tanh or gelu");
}

MlpOptions mlp_options_from_config(const Config& config) {
  MlpOptions o;
  o.layers = parse_layer_sizes(config.get_string("model.layers"), "model.layers");
  o.activation = parse_activation(config.get_string("model.activation"), "model.activation");
  const std::string& loss = config.get_string("model.loss");
  if (loss == "cross_entropy")
    o.loss = LossKind::CrossEntropy;
  else if (loss == "mse")
    o.loss = LossKind::MeanSquaredError;
  else
    throw InputError("model.loss = '" + loss + "' is not a loss; expected cross_entropy or mse");
  const std::string& init = config.get_string("model.init");
  if (init == "he")
    o.init = InitScheme::He;
  else if (init == "glorot")
    o.init = InitScheme::Glorot;
  else if (init == "auto")
    o.init = InitScheme::Auto;
  else
    throw InputError("model.init = '" + init +
                     "' is not an initialisation; expected he, glorot or auto");
  // The run's seed when the application declares it (tests may build a schema without it).
  if (config.schema().find("run.seed")) o.seed = std::uint64_t(config.get_int("run.seed"));
  validate_mlp_options(o);
  return o;
}

template class Mlp<ExecSpace, real>;

}  // namespace hpt

#include "physics-style-modules/model/register.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "physics-style-modules/model/mlp.hpp"

namespace hpt {

void declare_model_options(OptionSchema& schema) {
  add_style_choice<Model>(schema, "model", "mlp", register_model_styles,
                          "model style trained in train mode");
  schema.add_string("model.layers", "64,128,10",
                    "layer sizes, input first and output last, comma-separated (mlp)");
  schema.add_choice("model.activation", "relu", {"relu", "tanh", "gelu"},
                    "activation of the hidden layers (gelu: tanh approximation) (mlp)");
  schema.add_choice("model.loss", "cross_entropy", {"cross_entropy", "mse"},
                    "loss: softmax cross-entropy on class labels, or mean squared error (mlp)");
  schema.add_choice("model.init", "auto", {"auto", "he", "glorot"},
                    "weight initialisation: he normal, glorot uniform, auto (he for relu/gelu, "
                    "glorot for tanh); seeded by run.seed (mlp)");
}

namespace {

constexpr long kValidationRows = 1024;  // the trainer validates in chunks of this many rows

// Values, gradients and up to three optimizer buffers of the parameters; the activations, their
// gradients and pre-activations of the largest batch the trainer runs.
MemoryNeed mlp_memory(const Config& c) {
  const auto widths = parse_layer_sizes(c.get_string("model.layers"), "model.layers");
  double params = 0, width_sum = 0;
  for (std::size_t i = 0; i + 1 < widths.size(); ++i)
    params += double(widths[i]) * widths[i + 1] + widths[i + 1];
  for (int w : widths) width_sum += w;
  const double batch = double(std::max(c.get_int("train.batch_size"), kValidationRows));
  MemoryNeed need;
  need.bytes = (5 * params + 3 * batch * width_sum) * sizeof(real);
  need.parameters = params;
  need.keys = "model.layers = " + c.get_string("model.layers") +
              ", train.batch_size = " + std::to_string(c.get_int("train.batch_size"));
  return need;
}

}  // namespace

void register_model_styles(Registry<Model>& registry) {
  registry.add(
      "mlp",
      [](const Config& config) -> std::unique_ptr<Model> {
        return std::make_unique<Mlp<ExecSpace, real>>(mlp_options_from_config(config));
      },
      "multilayer perceptron: dense layers, relu/tanh/gelu, cross-entropy or mse", mlp_memory);
}

}  // namespace hpt

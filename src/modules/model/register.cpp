#include "modules/model/register.hpp"

#include <memory>

#include "modules/model/mlp.hpp"

namespace hpt {

void declare_model_options(OptionSchema& schema) {
  schema.add_choice("model.style", "mlp", {"mlp"}, "model style trained in train mode");
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

void register_model_styles(Registry<Model>& registry) {
  registry.add(
      "mlp",
      [](const Config& config) -> std::unique_ptr<Model> {
        return std::make_unique<Mlp<ExecSpace, real>>(mlp_options_from_config(config));
      },
      "multilayer perceptron: dense layers, relu/tanh/gelu, cross-entropy or mse");
}

}  // namespace hpt

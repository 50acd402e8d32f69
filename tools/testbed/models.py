"""The models the testbed trains: three shapes of network, each small enough
for one CPU core and large enough that an iteration takes 0.1-1 s.

    mlp          8 Linear(1024, 1024) + ReLU, 33.6 MB of gradients
    cnn          a ResNet for 32x32 images: a stem and 3 stages of 2 basic
                 blocks (32, 64, 128 channels), BatchNorm, 10 classes
    transformer  a 4-layer transformer encoder (d_model 256, 4 heads,
                 feed-forward 1024) over 32 tokens, mean-pooled, 10 classes

Inputs are synthetic (fixed random tensors, made once per process), so no
data loading takes time and every iteration computes the same shapes.
"""

import torch
import torch.nn as nn

from grid import MODELS  # noqa: F401  (the names, for the grid files)


class Mlp(nn.Module):
    def __init__(self, width=1024, depth=8, classes=10):
        super().__init__()
        layers = []
        for _ in range(depth):
            layers += [nn.Linear(width, width), nn.ReLU()]
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        return self.head(self.body(x))


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.relu2 = nn.ReLU()
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.relu1(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return self.relu2(y + self.shortcut(x))


class SmallResNet(nn.Module):
    def __init__(self, widths=(32, 64, 128), blocks=2, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 3, 1, 1, bias=False), nn.BatchNorm2d(widths[0]),
                                  nn.ReLU())
        stages = []
        cin = widths[0]
        for i, w in enumerate(widths):
            for b in range(blocks):
                stages.append(BasicBlock(cin, w, 2 if (b == 0 and i > 0) else 1))
                cin = w
        self.stages = nn.Sequential(*stages)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        return self.fc(self.flatten(self.pool(self.stages(self.stem(x)))))


class Transformer(nn.Module):
    def __init__(self, vocab=1000, d_model=256, heads=4, ff=1024, depth=4, classes=10):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        layer = nn.TransformerEncoderLayer(d_model, heads, ff, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False) \
            if "enable_nested_tensor" in nn.TransformerEncoder.__init__.__code__.co_varnames \
            else nn.TransformerEncoder(layer, depth)
        self.head = nn.Linear(d_model, classes)

    def forward(self, tokens):
        return self.head(self.encoder(self.embed(tokens)).mean(dim=1))


def build(name, batch, seed=0):
    """(model, inputs, targets) for `name` at `batch` samples, deterministic."""
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    if name == "mlp":
        model = Mlp()
        x = torch.randn(batch, 1024, generator=gen)
    elif name == "cnn":
        model = SmallResNet()
        x = torch.randn(batch, 3, 32, 32, generator=gen)
    elif name == "transformer":
        model = Transformer()
        x = torch.randint(0, 1000, (batch, 32), generator=gen)
    else:
        raise ValueError(f"model '{name}': expected one of {', '.join(MODELS)}")
    y = torch.randint(0, 10, (batch,), generator=gen)
    return model, x, y


def grad_bytes(model):
    return sum(p.numel() * p.element_size() for p in model.parameters() if p.requires_grad)


def units(name, model):
    """(name, module) of each sharding unit of model `name`, in forward
    order: its top-level layers (sharded.py gathers each unit's parameters
    together). mlp: the 8 Linear layers and the head; cnn: the stem, the 6
    basic blocks and fc; transformer: the embedding, the 4 encoder layers and
    the head. Every parameter of the model is in exactly one unit."""
    if name == "mlp":
        out = [(f"body.{i}", m) for i, m in enumerate(model.body) if isinstance(m, nn.Linear)]
        return out + [("head", model.head)]
    if name == "cnn":
        return [("stem", model.stem)] + [(f"stages.{i}", m) for i, m in enumerate(model.stages)] + \
            [("fc", model.fc)]
    if name == "transformer":
        return [("embed", model.embed)] + [(f"encoder.layers.{i}", m) for i, m in enumerate(model.encoder.layers)] + \
            [("head", model.head)]
    raise ValueError(f"model '{name}': expected one of {', '.join(MODELS)}")

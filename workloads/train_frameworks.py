#!/usr/bin/env python3
"""A small ResNet-18 trained on synthetic images through PyTorch Lightning or the Hugging Face Trainer, with
wattwise's callback as the only instrumentation: the GPU-machine evidence for the framework callbacks.

No marker is sent by this script itself: the callback marks training, epochs, iterations (samples=batch) and
validation, and logs each epoch's energy into the framework's logger when the running wattwise answers
(wattwise.window_energy). At the end one JSON line goes to stdout: {"framework", "epochs", "logged": [the
epoch energies the framework's own log holds, in joules, null where none was logged]}.

    wattwise measure --json m.json -- python3 workloads/train_frameworks.py --framework lightning
"""

import argparse
import json
import os
import sys
import tempfile

FRAMEWORKS = ("lightning", "huggingface")


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--framework", choices=FRAMEWORKS, required=True)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--batches-per-epoch", type=int, default=60)
    parser.add_argument("--image-size", type=int, default=128)
    parser.add_argument("--log-dir", default=None, help="where the framework writes its logs (default: a temp dir)")
    return parser.parse_args(argv)


class SyntheticImages:
    """Random images and labels made once on the CPU (the loader is not what is measured)."""

    def __init__(self, count, size):
        import torch

        generator = torch.Generator().manual_seed(0)
        self.images = torch.randn(count, 3, size, size, generator=generator)
        self.labels = torch.randint(0, 10, (count,), generator=generator)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, index):
        return self.images[index], self.labels[index]


def resnet18():
    import torchvision

    return torchvision.models.resnet18(weights=None, num_classes=10)


def train_lightning(args, data, log_dir):
    import torch

    try:
        import lightning.pytorch as L
    except ImportError:
        import pytorch_lightning as L
    from wattwise.lightning import WattwiseCallback

    class Module(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = resnet18()

        def training_step(self, batch, batch_idx):
            images, labels = batch
            return torch.nn.functional.cross_entropy(self.net(images), labels)

        def validation_step(self, batch, batch_idx):
            images, labels = batch
            self.log("val_loss", torch.nn.functional.cross_entropy(self.net(images), labels))

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.05, momentum=0.9)

    loader = torch.utils.data.DataLoader(data, batch_size=args.batch, shuffle=False)
    validation = torch.utils.data.DataLoader(torch.utils.data.Subset(data, range(4 * args.batch)),
                                             batch_size=args.batch)
    logger = L.loggers.CSVLogger(log_dir, name="lightning")
    trainer = L.Trainer(max_epochs=args.epochs, accelerator="gpu", devices=1, callbacks=[WattwiseCallback()],
                        logger=logger, enable_checkpointing=False, enable_progress_bar=False,
                        num_sanity_val_steps=0, log_every_n_steps=10)
    trainer.fit(Module(), loader, validation)
    logged = []
    metrics = os.path.join(logger.log_dir, "metrics.csv")
    import csv

    with open(metrics) as f:
        for row in csv.DictReader(f):
            if row.get("wattwise/epoch_energy_j"):
                logged.append(float(row["wattwise/epoch_energy_j"]))
    return logged, metrics


def train_huggingface(args, data, log_dir):
    import torch
    import transformers
    from wattwise.huggingface import WattwiseCallback

    class Module(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.net = resnet18()

        def forward(self, pixel_values, labels=None):
            logits = self.net(pixel_values)
            return {"loss": torch.nn.functional.cross_entropy(logits, labels), "logits": logits}

    class Dicts(torch.utils.data.Dataset):
        def __init__(self, inner):
            self.inner = inner

        def __len__(self):
            return len(self.inner)

        def __getitem__(self, index):
            image, label = self.inner[index]
            return {"pixel_values": image, "labels": label}

    output_dir = os.path.join(log_dir, "huggingface")
    arguments = transformers.TrainingArguments(output_dir=output_dir, num_train_epochs=args.epochs,
                                               per_device_train_batch_size=args.batch, save_strategy="no",
                                               report_to=[], disable_tqdm=True, logging_strategy="epoch",
                                               dataloader_num_workers=0)
    trainer = transformers.Trainer(model=Module(), args=arguments, train_dataset=Dicts(data),
                                   callbacks=[WattwiseCallback()])
    trainer.train()
    history = os.path.join(output_dir, "log_history.json")
    with open(history, "w") as f:
        json.dump(trainer.state.log_history, f, indent=1)
    logged = [entry["wattwise/epoch_energy_j"] for entry in trainer.state.log_history
              if "wattwise/epoch_energy_j" in entry]
    return logged, history


def main(argv):
    args = parse_arguments(argv)
    data = SyntheticImages(args.batch * args.batches_per_epoch, args.image_size)
    log_dir = args.log_dir or tempfile.mkdtemp(prefix="wattwise-frameworks-")
    os.makedirs(log_dir, exist_ok=True)
    train = train_lightning if args.framework == "lightning" else train_huggingface
    logged, where = train(args, data, log_dir)
    print(json.dumps({"framework": args.framework, "epochs": args.epochs, "logged": logged, "log": where}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

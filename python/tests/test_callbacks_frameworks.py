"""The callbacks in a tiny real training, where the framework is installed (CPU only; each test skips and
names the missing package otherwise)."""

import importlib.util
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from marker_receiver import ReceiverTestCase  # noqa: E402


def missing(*modules):
    """The first of ``modules`` that cannot be imported here, or None."""
    return next((name for name in modules if importlib.util.find_spec(name) is None), None)


def lightning_missing():
    if missing("torch"):
        return "torch"
    if missing("lightning") and missing("pytorch_lightning"):
        return "lightning (or pytorch_lightning)"
    return None


def counts(markers):
    result = {}
    for marker in markers:
        if marker.kind == "E":
            result[marker.name] = result.get(marker.name, 0) + 1
    return result


def ends(markers, name):
    return [m for m in markers if m.kind == "E" and m.name == name]


@unittest.skipIf(lightning_missing(), "PyTorch Lightning callback not trained: %s is not installed here"
                 % lightning_missing())
class RealLightning(ReceiverTestCase):
    def test_two_epochs_of_four_batches_of_eight(self):
        import torch
        from wattwise.lightning import WattwiseCallback

        try:  # the package wattwise.lightning took its Callback from, in the same order
            import lightning.pytorch as L
        except ImportError:
            import pytorch_lightning as L

        class Tiny(L.LightningModule):
            def __init__(self):
                super().__init__()
                self.layer = torch.nn.Linear(4, 1)

            def training_step(self, batch, batch_idx):
                x, y = batch
                return torch.nn.functional.mse_loss(self.layer(x), y)

            def validation_step(self, batch, batch_idx):
                x, y = batch
                self.log("val_loss", torch.nn.functional.mse_loss(self.layer(x), y))

            def configure_optimizers(self):
                return torch.optim.SGD(self.parameters(), lr=0.1)

        data = torch.utils.data.TensorDataset(torch.randn(32, 4), torch.randn(32, 1))
        loader = torch.utils.data.DataLoader(data, batch_size=8)
        trainer = L.Trainer(max_epochs=2, accelerator="cpu", devices=1, callbacks=[WattwiseCallback()],
                            logger=False, enable_checkpointing=False, enable_progress_bar=False,
                            enable_model_summary=False, num_sanity_val_steps=0)
        trainer.fit(Tiny(), loader, loader)
        markers = self.receiver.markers(count=2 * (1 + 2 + 4 + 1))
        self.assertEqual(counts(markers), {"training": 1, "epoch": 2, "iteration": 8, "evaluation": 2})
        self.assertEqual([m.counters["samples"] for m in ends(markers, "iteration")], [8] * 8)
        self.assertEqual([m.counters["epoch"] for m in ends(markers, "epoch")], [0, 1])


@unittest.skipIf(missing("torch", "transformers"), "transformers Trainer callback not trained: %s is not "
                 "installed here" % missing("torch", "transformers"))
class RealHuggingFaceTrainer(ReceiverTestCase):
    def test_two_epochs_of_four_steps_then_evaluate(self):
        import torch
        import transformers
        from wattwise.huggingface import WattwiseCallback

        class Tiny(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.layer = torch.nn.Linear(4, 1)

            def forward(self, x, labels=None):
                prediction = self.layer(x)
                return {"loss": torch.nn.functional.mse_loss(prediction, labels), "logits": prediction}

        class Data(torch.utils.data.Dataset):
            def __init__(self):
                self.x, self.y = torch.randn(32, 4), torch.randn(32, 1)

            def __len__(self):
                return 32

            def __getitem__(self, index):
                return {"x": self.x[index], "labels": self.y[index]}

        with tempfile.TemporaryDirectory() as output_dir:
            args = transformers.TrainingArguments(output_dir=output_dir, num_train_epochs=2,
                                                  per_device_train_batch_size=8, per_device_eval_batch_size=8,
                                                  save_strategy="no", report_to=[], use_cpu=True,
                                                  disable_tqdm=True)
            trainer = transformers.Trainer(model=Tiny(), args=args, train_dataset=Data(), eval_dataset=Data(),
                                           callbacks=[WattwiseCallback()])
            trainer.train()
            trainer.evaluate()
        markers = self.receiver.markers(count=1 + 2 + 8 + 1)
        self.assertEqual(counts(markers), {"training": 1, "epoch": 2, "iteration": 8, "evaluation": 1})
        self.assertEqual([m.counters["samples"] for m in ends(markers, "iteration")], [8] * 8)


@unittest.skipIf(missing("keras"), "Keras callback not trained: keras is not installed here")
class RealKeras(ReceiverTestCase):
    def test_two_epochs_of_three_batches_of_eight_with_validation(self):
        import keras
        import numpy
        from wattwise.keras import WattwiseCallback

        if keras.backend.backend() == "numpy":
            self.skipTest("Keras' numpy backend cannot train; set KERAS_BACKEND to torch, jax or tensorflow")
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
        model.compile(optimizer="sgd", loss="mse")
        x, y = numpy.random.rand(32, 4), numpy.random.rand(32, 1)
        model.fit(x, y, batch_size=8, epochs=2, validation_split=0.25, verbose=0,
                  callbacks=[WattwiseCallback(batch_size=8)])
        markers = self.receiver.markers(count=2 * (1 + 3 + 1) + 1)
        self.assertEqual(counts(markers), {"training": 1, "epoch": 2, "iteration": 6, "evaluation": 2})
        self.assertEqual([m.counters["samples"] for m in ends(markers, "iteration")], [8] * 6)


if __name__ == "__main__":
    unittest.main()

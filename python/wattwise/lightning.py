"""A PyTorch Lightning 2.x callback that marks training for wattwise; Lightning is imported here only.

    import lightning as L
    from wattwise.lightning import WattwiseCallback

    trainer = L.Trainer(max_epochs=3, callbacks=[WattwiseCallback()])
    trainer.fit(model, train_loader, val_loader)

Run the script under ``wattwise measure -- python train.py``; without wattwise the callback does nothing.
What it marks, and what it does not yet do: wattwise.callbacks, docs/frameworks.md.
"""

try:
    from lightning.pytorch.callbacks import Callback as _Callback
except ImportError:
    try:  # the older package name, still published with the same Callback API
        from pytorch_lightning.callbacks import Callback as _Callback
    except ImportError as error:
        raise ImportError("wattwise.lightning needs PyTorch Lightning 2.x: pip install lightning") from error

from wattwise.callbacks import LightningHooks


class WattwiseCallback(LightningHooks, _Callback):
    """Marks training, each epoch (epoch=N), each batch as an iteration (samples = the batch's size when it
    is a tensor or a tuple/dict of them) and each validation pass (evaluation)."""

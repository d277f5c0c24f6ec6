"""A Keras 3 callback that marks training for wattwise; Keras is imported here only.

    from wattwise.keras import WattwiseCallback

    model.fit(x, y, batch_size=64, epochs=3, validation_split=0.1,
              callbacks=[WattwiseCallback(batch_size=64)])

Run the script under ``wattwise measure -- python train.py``; without wattwise the callback does nothing.
What it marks, and what it does not yet do: wattwise.callbacks, docs/frameworks.md.
"""

try:
    import keras as _keras
except ImportError as error:
    raise ImportError("wattwise.keras needs Keras 3: pip install keras") from error

from wattwise.callbacks import KerasHooks


class WattwiseCallback(KerasHooks, _keras.callbacks.Callback):
    """Marks training, each epoch (epoch=N), each training batch as an iteration (samples=batch_size when
    given: Keras 3 does not tell callbacks the batch size) and each validation or evaluate() pass
    (evaluation)."""

"""A Hugging Face transformers Trainer callback that marks training for wattwise; transformers is imported
here only.

    from transformers import Trainer
    from wattwise.huggingface import WattwiseCallback

    trainer = Trainer(model=model, args=args, train_dataset=train, eval_dataset=test,
                      callbacks=[WattwiseCallback()])
    trainer.train()

Run the script under ``wattwise measure -- python train.py``; without wattwise the callback does nothing.
What it marks, and what it does not yet do: wattwise.callbacks, docs/frameworks.md.
"""

try:
    from transformers import TrainerCallback as _TrainerCallback
except ImportError as error:
    raise ImportError("wattwise.huggingface needs Hugging Face transformers 4.x: pip install transformers") from error

from wattwise.callbacks import HuggingFaceHooks


class WattwiseCallback(HuggingFaceHooks, _TrainerCallback):
    """Marks training, each epoch (epoch=N), each optimizer step as an iteration (samples = per-device batch
    size x gradient accumulation steps) and each evaluation."""

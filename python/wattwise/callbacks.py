"""What the framework callbacks mark, in pure Python: no framework is imported here.

The callbacks users add are in wattwise.lightning (PyTorch Lightning 2.x), wattwise.huggingface (transformers'
Trainer, 4.x) and wattwise.keras (Keras 3); each imports its framework and mixes one of the hook classes below
into the framework's own base class. Keeping the hooks here lets them be tested, and read, without any
framework installed.

Every framework's run is marked with the phases docs/markers.md recommends:

- ``training``: the whole fit;
- ``epoch``: one training epoch, its end carrying ``epoch=N`` (0-based);
- ``iteration``: one training batch (a Trainer step), its end carrying ``samples=`` when the batch size can
  be known;
- ``evaluation``: a validation or evaluation pass (Lightning's sanity check is marked ``sanity_check``).

An epoch's energy is asked of wattwise through wattwise.window_energy() once the epoch has ended, and logged
into the framework's logger when known: the running `wattwise measure` or `tune` answers it (docs/windows.md);
without wattwise it is None, and nothing is logged.
"""

import collections.abc
import time

import wattwise

TRAINING = "training"
EPOCH = "epoch"
ITERATION = "iteration"
EVALUATION = "evaluation"
SANITY_CHECK = "sanity_check"

# The name an epoch's energy is logged under; Keras' logs use names without '/' (they become CSV columns).
EPOCH_ENERGY_KEY = "wattwise/epoch_energy_j"
KERAS_EPOCH_ENERGY_KEY = "wattwise_epoch_energy_j"


def batch_size(batch, _depth=0):
    """The number of samples in a batch as a data loader yields it: a tensor or array, or a tuple, list or
    dict whose first item is one (``(images, labels)``, ``{"input_ids": ...}``); None when it cannot be told
    (a list of Python objects could be samples or fields, so it is not guessed)."""
    if _depth > 4:
        return None
    shape = getattr(batch, "shape", None)
    if shape is not None:
        try:
            return int(shape[0]) if len(shape) > 0 else None
        except (TypeError, ValueError, IndexError):
            return None
    if isinstance(batch, collections.abc.Mapping):
        return batch_size(next(iter(batch.values()), None), _depth + 1)
    if isinstance(batch, (list, tuple)) and batch:
        return batch_size(batch[0], _depth + 1)
    return None


class TrainingMarks:
    """Begins and ends phases, and remembers which are open so that a crash can close them (an unclosed
    begin is reported as unmatched, and its energy lost)."""

    def __init__(self):
        self._open = []  # names of the phases begun and not yet ended, innermost last

    def begin(self, name, t_ns=None):
        """Begins ``name`` now, or at ``t_ns`` (CLOCK_MONOTONIC) when the framework tells us late."""
        wattwise._send("B", name, {}, t_ns)
        self._open.append(name)

    def end(self, name, **counters):
        """Ends the innermost open ``name``. An end with no open begin is not sent: a framework that calls an
        end hook without its begin (a callback added mid-run) must not leave wattwise an unmatched end."""
        if name not in self._open:
            return False
        del self._open[len(self._open) - 1 - self._open[::-1].index(name)]
        wattwise.end(name, **{k: v for k, v in counters.items() if v is not None})
        return True

    def end_all(self):
        """Ends every open phase, innermost first (the run stopped with an exception, or ended early)."""
        while self._open:
            wattwise.end(self._open.pop())

    def is_open(self, name):
        return name in self._open


def epoch_energy_j():
    """The last epoch's energy, or None while no wattwise answers (looked up through the module so that one
    function decides, and tests can stand in for wattwise)."""
    return wattwise.window_energy(EPOCH)


class LightningHooks:
    """PyTorch Lightning 2.x ``Callback`` hooks; names and signatures as documented at
    https://lightning.ai/docs/pytorch/stable/api/lightning.pytorch.callbacks.Callback.html
    (on_train_start/end, on_train_epoch_start/end, on_train_batch_start/end, on_validation_start/end,
    on_exception). Lightning runs validation inside the training epoch, so an epoch's time and energy include
    its validation; the ``evaluation`` phase tells how much."""

    def __init__(self):
        super().__init__()
        self._marks = TrainingMarks()
        self._validation_name = EVALUATION

    def on_train_start(self, trainer, pl_module):
        self._marks.begin(TRAINING)

    def on_train_end(self, trainer, pl_module):
        self._marks.end_all()

    def on_train_epoch_start(self, trainer, pl_module):
        self._marks.begin(EPOCH)

    def on_train_epoch_end(self, trainer, pl_module):
        if self._marks.end(EPOCH, epoch=getattr(trainer, "current_epoch", None)):
            energy_j = epoch_energy_j()
            if energy_j is not None:
                pl_module.log(EPOCH_ENERGY_KEY, energy_j)

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        self._marks.begin(ITERATION)

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        self._marks.end(ITERATION, samples=batch_size(batch))

    def on_validation_start(self, trainer, pl_module):
        # The sanity check (a few validation batches before training) is not an evaluation of the model.
        self._validation_name = SANITY_CHECK if getattr(trainer, "sanity_checking", False) else EVALUATION
        self._marks.begin(self._validation_name)

    def on_validation_end(self, trainer, pl_module):
        self._marks.end(self._validation_name)

    def on_exception(self, trainer, pl_module, exception):
        self._marks.end_all()


class HuggingFaceHooks:
    """transformers' ``TrainerCallback`` hooks (4.x), as documented at
    https://huggingface.co/docs/transformers/main_classes/callback: each is called with
    ``(args, state, control, **kwargs)``. A step is one optimizer update, so an iteration's samples are
    ``per_device_train_batch_size * gradient_accumulation_steps`` of this process (the nominal count: a
    shorter last batch is not seen). The Trainer calls no hook before it evaluates, only ``on_evaluate`` after;
    so the evaluation phase is stamped from the training step or epoch that ended just before it (it then
    includes the Trainer's logging there, which is short), or from the first ``on_prediction_step`` of a
    stand-alone evaluate()."""

    def __init__(self):
        super().__init__()
        self._marks = TrainingMarks()
        self._epoch_index = None
        self._counted_epochs = 0
        self._idle_since_ns = None  # when the last step or epoch ended, while nothing else has begun
        self._evaluation_begin_ns = None

    def _went_idle(self):
        self._idle_since_ns = time.monotonic_ns()

    def on_train_begin(self, args, state, control, **kwargs):
        self._marks.begin(TRAINING)

    def on_train_end(self, args, state, control, **kwargs):
        self._marks.end_all()
        self._idle_since_ns = None

    def on_epoch_begin(self, args, state, control, **kwargs):
        self._idle_since_ns = None
        # state.epoch is the float progress through training, a whole number at an epoch's start (it counts
        # the epochs of a resumed run too); our own count stands in when it is missing.
        progress = getattr(state, "epoch", None)
        self._epoch_index = int(round(progress)) if isinstance(progress, (int, float)) else self._counted_epochs
        self._counted_epochs += 1
        self._marks.begin(EPOCH)

    def on_epoch_end(self, args, state, control, **kwargs):
        if self._marks.end(EPOCH, epoch=self._epoch_index):
            energy_j = epoch_energy_j()
            if energy_j is not None:
                # The Trainer's own record (saved in trainer_state.json); a callback cannot call Trainer.log.
                state.log_history.append({"epoch": state.epoch, "step": state.global_step,
                                          EPOCH_ENERGY_KEY: energy_j})
        self._went_idle()

    def on_step_begin(self, args, state, control, **kwargs):
        self._idle_since_ns = None
        self._marks.begin(ITERATION)

    def on_step_end(self, args, state, control, **kwargs):
        self._marks.end(ITERATION, samples=_samples_per_step(args))
        self._went_idle()

    def on_prediction_step(self, args, state, control, **kwargs):
        if self._evaluation_begin_ns is None:
            self._evaluation_begin_ns = self._idle_since_ns or time.monotonic_ns()

    def on_predict(self, args, state, control, **kwargs):
        self._evaluation_begin_ns = None  # predict() ran prediction steps; they were not an evaluation

    def on_evaluate(self, args, state, control, **kwargs):
        begin_ns = self._evaluation_begin_ns or self._idle_since_ns or time.monotonic_ns()
        self._marks.begin(EVALUATION, t_ns=begin_ns)
        self._marks.end(EVALUATION)
        self._evaluation_begin_ns = None
        self._idle_since_ns = None


def _samples_per_step(args):
    per_device = getattr(args, "per_device_train_batch_size", None)
    accumulation = getattr(args, "gradient_accumulation_steps", 1) or 1
    if not isinstance(per_device, int) or not isinstance(accumulation, int):
        return None
    return per_device * accumulation


class KerasHooks:
    """Keras 3 ``keras.callbacks.Callback`` hooks, as documented at
    https://keras.io/api/callbacks/base_callback/ (on_train_begin/end, on_epoch_begin/end,
    on_train_batch_begin/end, on_test_begin/end, each with ``logs=None``). Keras 3 no longer tells a callback
    the batch size, so iterations carry ``samples=`` only when ``batch_size`` is given. Validation during fit()
    runs inside the epoch (Keras calls on_test_begin/end for it, as for evaluate())."""

    def __init__(self, batch_size=None):
        super().__init__()
        # Checked here, when the script starts, rather than at the first batch's end, in the middle of fit().
        if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, int)
                                       or batch_size <= 0):
            raise ValueError("WattwiseCallback(batch_size=%r): give the number of samples per batch, a whole "
                             "number above 0, or leave it out" % (batch_size,))
        self.batch_size = batch_size
        self._marks = TrainingMarks()

    def on_train_begin(self, logs=None):
        self._marks.begin(TRAINING)

    def on_train_end(self, logs=None):
        self._marks.end_all()

    def on_epoch_begin(self, epoch, logs=None):
        self._marks.begin(EPOCH)

    def on_epoch_end(self, epoch, logs=None):
        if self._marks.end(EPOCH, epoch=epoch):
            energy_j = epoch_energy_j()
            # Keras passes the epoch's logs to the callbacks after this one (History, CSVLogger, TensorBoard).
            if energy_j is not None and logs is not None:
                logs[KERAS_EPOCH_ENERGY_KEY] = energy_j

    def on_train_batch_begin(self, batch, logs=None):
        self._marks.begin(ITERATION)

    def on_train_batch_end(self, batch, logs=None):
        self._marks.end(ITERATION, samples=self.batch_size)

    def on_test_begin(self, logs=None):
        self._marks.begin(EVALUATION)

    def on_test_end(self, logs=None):
        self._marks.end(EVALUATION)

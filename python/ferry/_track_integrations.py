"""The optional integrations of ferry.track: a Hugging Face Trainer callback and an Accelerate
tracker. Built on first use (ferry.track.__getattr__), so importing ferry.track never imports
transformers or accelerate; an ImportError names the missing library."""
import numbers
import os

from ferry.track import flatten, init


def _numeric_only(values):
    return {k: v for k, v in flatten(dict(values or {})).items()
            if isinstance(v, numbers.Real) or (hasattr(v, "item") and not isinstance(v, str))}


def _trainer_callback_class():
    """A Hugging Face `transformers.TrainerCallback` logging to ferry.track (main process only):
    `Trainer(..., callbacks=[ferry.track.FerryTrainerCallback(project="x")])`."""
    from transformers import TrainerCallback   # ImportError when transformers is missing

    class FerryTrainerCallback(TrainerCallback):
        def __init__(self, project=None, **init_kwargs):
            self.project, self.init_kwargs, self.run = project, init_kwargs, None

        def on_train_begin(self, args, state, control, **kwargs):
            if self.run is None and state.is_world_process_zero:
                project = self.project or os.environ.get("FERRY_TRACK_PROJECT", "huggingface")
                config = {k: v for k, v in args.to_dict().items()
                          if isinstance(v, (int, float, str, bool))}
                self.run = init(project, name=getattr(args, "run_name", None), config=config,
                                **self.init_kwargs)

        def on_log(self, args, state, control, logs=None, **kwargs):
            if self.run is not None:
                self.run.log(_numeric_only(logs), step=state.global_step)

        def on_train_end(self, args, state, control, **kwargs):
            if self.run is not None:
                self.run.finish()
                self.run = None

    return FerryTrainerCallback


def _accelerate_tracker_class():
    """An `accelerate.tracking.GeneralTracker`:
    `Accelerator(log_with=[ferry.track.FerryAccelerateTracker("project")])`."""
    from accelerate.tracking import GeneralTracker   # ImportError when accelerate is missing

    class FerryAccelerateTracker(GeneralTracker):
        name = "ferry"
        requires_logging_directory = False
        main_process_only = True

        def __init__(self, run_name, **init_kwargs):
            super().__init__()
            self.run_name, self.run = run_name, init(run_name, **init_kwargs)

        @property
        def tracker(self):
            return self.run

        def store_init_configuration(self, values):
            self.run.log_params(values)

        def log(self, values, step=None, **kwargs):
            self.run.log(_numeric_only(values), step=step)

        def finish(self):
            self.run.finish()

    return FerryAccelerateTracker


def build(name):
    return {"FerryTrainerCallback": _trainer_callback_class,
            "FerryAccelerateTracker": _accelerate_tracker_class}[name]()

"""``SummaryWriter`` / ``FileWriter``: summaries into TensorBoard event files, as torch's.

``FileWriter`` wraps tensorboard's ``EventFileWriter`` (which queues events and writes them from a
thread). ``SummaryWriter`` keeps one ``FileWriter`` per directory: its own ``log_dir`` and one
sub-directory per ``add_scalars`` series (``<log_dir>/<main_tag>_<tag>``), as torch does.
"""

import os
import time

from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from ._image import figure_to_image, image
from ._summary import histogram, histogram_raw, hparams, scalar, tensor_proto, text

__all__ = ["FileWriter", "SummaryWriter"]


class FileWriter:
    """Writes protocol buffers to event files to be consumed by TensorBoard."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self):
        """Return the directory where event file will be written."""
        return self.event_writer.get_logdir()

    def add_event(self, event, step=None, walltime=None):
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime=None):
        self.add_event(Event(summary=summary), global_step, walltime)

    def flush(self):
        self.event_writer.flush()

    def close(self):
        self.event_writer.close()

    def reopen(self):
        self.event_writer.reopen()


def _default_bins():
    """TensorFlow's default histogram buckets: +-1e-12 * 1.1**k up to 1e20, and 0."""
    v, pos = 1e-12, []
    while v < 1e20:
        pos.append(v)
        v *= 1.1
    return [-b for b in reversed(pos)] + [0] + pos


class SummaryWriter:
    """Writes entries directly to event files in the log_dir to be consumed by TensorBoard.

    Args:
        log_dir (str): Save directory location. Default is runs/**CURRENT_DATETIME_HOSTNAME**,
            which changes after each run.
        comment (str): Comment log_dir suffix appended to the default ``log_dir``. If
            ``log_dir`` is assigned, this argument has no effect.
        purge_step (int): events whose global_step is larger or equal to ``purge_step`` are
            hidden by TensorBoard (for a run resumed after a crash).
        max_queue (int): Size of the queue for pending events before one of the 'add' calls
            forces a flush to disk. Default is ten items.
        flush_secs (int): How often, in seconds, to flush the pending events to disk.
            Default is every two minutes.
        filename_suffix (str): Suffix added to all event filenames in the log_dir directory.
    """

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120,
                 filename_suffix=""):
        if not log_dir:
            import socket
            from datetime import datetime

            now = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", now + "_" + socket.gethostname() + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = self.all_writers = None
        self._get_file_writer()
        self.default_bins = _default_bins()

    def _get_file_writer(self):
        """The default FileWriter (a new one after ``close()``)."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs,
                                          self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                step, self.purge_step = self.purge_step, None
                self.file_writer.add_event(Event(step=step, file_version="brain.Event:2"))
                self.file_writer.add_event(
                    Event(step=step, session_log=SessionLog(status=SessionLog.START)))
        return self.file_writer

    def get_logdir(self):
        """Return the directory where event files will be written."""
        return self.log_dir

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None,
                    global_step=None):
        """Add a set of hyperparameters (and their metrics) to be compared in TensorBoard; they
        go to the sub-directory ``run_name`` (default: the current time)."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        summaries = hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name or str(time.time()))
        with SummaryWriter(log_dir=logdir) as w:
            for s in summaries:
                w.file_writer.add_summary(s, global_step)
            for k, v in metric_dict.items():
                w.add_scalar(k, v, global_step)

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        """Add scalar data (a number, or a one-element tensor or array) to summary."""
        summary = scalar(tag, scalar_value, new_style=new_style, double_precision=double_precision)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Add many scalars to one plot: each tag is written under ``main_tag`` in the
        sub-directory ``<log_dir>/<main_tag>_<tag>`` (one run per tag in TensorBoard)."""
        walltime = time.time() if walltime is None else walltime
        logdir = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            fw_tag = logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            fw = self.all_writers.get(fw_tag)
            if fw is None:
                fw = self.all_writers[fw_tag] = FileWriter(
                    fw_tag, self.max_queue, self.flush_secs, self.filename_suffix)
            fw.add_summary(scalar(main_tag, value), global_step, walltime)

    def add_tensor(self, tag, tensor, global_step=None, walltime=None):
        """Add a whole tensor (its shape, dtype and values) to summary."""
        self._get_file_writer().add_summary(tensor_proto(tag, tensor), global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None):
        """Add a histogram of ``values`` (Tensor, sparse Tensor, ndarray) to summary; ``bins`` is
        ``"tensorflow"`` (TensorFlow's buckets) or anything ``numpy.histogram`` accepts."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._get_file_writer().add_summary(
            histogram(tag, values, bins, max_bins=max_bins), global_step, walltime)

    def add_histogram_raw(self, tag, min, max, num, sum, sum_squares, bucket_limits,
                          bucket_counts, global_step=None, walltime=None):
        """Add a histogram from its statistics and buckets (right edges and counts)."""
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        summary = histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """Add text data (Markdown) to summary, under ``<tag>/text_summary``."""
        self._get_file_writer().add_summary(text(tag, text_string), global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """Add an image (float in [0, 1] or uint8; ``dataformats`` e.g. ``CHW``, ``HWC``, ``HW``);
        needs Pillow."""
        self._get_file_writer().add_summary(
            image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """Add a batch of images, shown as one grid of 8 columns."""
        self._get_file_writer().add_summary(
            image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """Render a matplotlib figure (or a list of figures, as a grid) into an image."""
        fmt = "NCHW" if isinstance(figure, list) else "CHW"
        self.add_image(tag, figure_to_image(figure, close), global_step, walltime, dataformats=fmt)

    def flush(self):
        """Flushes the event files to disk."""
        if self.all_writers is None:
            return
        for w in self.all_writers.values():
            w.flush()

    def close(self):
        """Flushes and closes every event file (a later ``add_*`` opens a new one)."""
        if self.all_writers is None:
            return
        for w in self.all_writers.values():
            w.flush()
            w.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()


def _not_implemented(name):
    def method(self, *args, **kwargs):
        raise NotImplementedError(
            f"SummaryWriter.{name} is not implemented in sparsetorch (scalars, histograms, text, "
            "images, figures and hparams are)")
    method.__name__ = name
    return method


for _name in ("add_image_with_boxes", "add_video", "add_audio", "add_graph", "add_onnx_graph",
              "add_embedding", "add_pr_curve", "add_pr_curve_raw", "add_custom_scalars",
              "add_custom_scalars_multilinechart", "add_custom_scalars_marginchart", "add_mesh"):
    setattr(SummaryWriter, _name, _not_implemented(_name))
del _name
